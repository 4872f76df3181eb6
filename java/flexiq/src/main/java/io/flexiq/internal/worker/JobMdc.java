package io.flexiq.internal.worker;

import org.slf4j.MDC;

/**
 * The SLF4J MDC that names a job ({@value #JOB_ID}, {@value #TASK}, {@value #QUEUE},
 * {@value #ATTEMPT}): set while its handler runs, and around every line the worker logs about the
 * job (failed, retried, dead, rescued, given back, recorded late), so that logs filtered by job id
 * hold them all. Closing it puts back what the thread's MDC held before.
 */
final class JobMdc implements AutoCloseable {
    static final String JOB_ID = "flexiq.jobId";
    static final String TASK = "flexiq.task";
    static final String QUEUE = "flexiq.queue";
    static final String ATTEMPT = "flexiq.attempt";
    private static final String[] KEYS = {JOB_ID, TASK, QUEUE, ATTEMPT};

    private final String[] before = new String[KEYS.length];

    private JobMdc(String... values) {
        for (int i = 0; i < KEYS.length; i++) {
            before[i] = MDC.get(KEYS[i]);
            MDC.put(KEYS[i], values[i]);
        }
    }

    /** Names attempt {@code a}'s job on this thread until closed. */
    static JobMdc of(HeldAttempt a) {
        return of(a.id, a.handler.task().name(), a.queue, a.attempt);
    }

    /** Names job {@code id} on this thread until closed. */
    static JobMdc of(long id, String task, String queue, int attempt) {
        return new JobMdc(Long.toString(id), task, queue, Integer.toString(attempt));
    }

    /** Runs {@code log} with attempt {@code a}'s job named in the MDC. */
    static void around(HeldAttempt a, Runnable log) {
        around(a.id, a.handler.task().name(), a.queue, a.attempt, log);
    }

    /** Runs {@code log} with job {@code id} named in the MDC. */
    static void around(long id, String task, String queue, int attempt, Runnable log) {
        JobMdc named = of(id, task, queue, attempt);
        try {
            log.run();
        } finally {
            named.close();
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < KEYS.length; i++) {
            if (before[i] == null) {
                MDC.remove(KEYS[i]);
            } else {
                MDC.put(KEYS[i], before[i]);
            }
        }
    }
}
