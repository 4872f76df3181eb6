package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Pausing and resuming queues, through the API, across worker processes. */
class QueuePauseTest {
    /** A job of the test: how long its handler takes. */
    public record Step(long sleepMillis) {}

    @Test
    void nothingOfAPausedQueueStartsInThreeWorkerProcessesAfterThePauseReturnsAndEverythingRunsAfterTheResume()
            throws Exception {
        String url = TestDatabase.url();
        String schema = TestDatabase.freshSchema();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            TestDatabase.execute("CREATE TABLE " + schema + ".runs (job_id bigint, queue text, started timestamptz)");
            List<Process> workers = new ArrayList<>();
            AtomicBoolean producing = new AtomicBoolean(true);
            AtomicLong enqueued = new AtomicLong();
            // Enqueues go on through the pause, to both queues.
            Thread producer = new Thread(() -> {
                while (producing.get()) {
                    queue.enqueue(PauseChild.STEP, new Step(10), EnqueueOptions.builder().queue("reports").build());
                    queue.enqueue(PauseChild.STEP, new Step(10));
                    enqueued.addAndGet(2);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            try {
                workers.addAll(ChildProcesses.start(3, PauseChild.class, url, TestDatabase.jdbcUrl(), schema));
                producer.start();
                WorkerTest.await("the reports queue to run in every worker process", () -> WorkerTest.scalar(
                        "SELECT count(*) FROM " + schema + ".runs WHERE queue = 'reports'") >= 30);

                assertTrue(queue.pauseQueue("reports"));
                // The jobs of the queue that had started by the time the pause returned: claimed
                // (running or finished); every other job of the queue must wait.
                TestDatabase.execute("CREATE TABLE " + schema + ".started_before AS SELECT id FROM " + schema
                        + ".jobs WHERE queue = 'reports' AND state NOT IN ('available', 'scheduled', 'retryable')");
                long before = WorkerTest.scalar("SELECT count(*) FROM " + schema + ".started_before");
                assertFalse(queue.pauseQueue("reports"), "paused already");
                assertEquals(List.of("reports"), queue.pausedQueues().stream().map(PausedQueue::queue).toList());
                long defaultRuns = WorkerTest.scalar("SELECT count(*) FROM " + schema + ".runs WHERE queue = 'default'");
                Thread.sleep(2_000);

                String startedAfter = "SELECT count(*) FROM " + schema + ".jobs WHERE queue = 'reports' AND state NOT IN"
                        + " ('available', 'scheduled', 'retryable') AND id NOT IN (SELECT id FROM " + schema
                        + ".started_before)";
                assertEquals(0, WorkerTest.scalar(startedAfter), "jobs of the paused queue started");
                assertEquals(0, WorkerTest.scalar("SELECT count(*) FROM " + schema + ".runs WHERE queue = 'reports'"
                        + " AND job_id NOT IN (SELECT id FROM " + schema + ".started_before)"),
                        "handlers of the paused queue's jobs ran");
                long waiting = WorkerTest.scalar("SELECT count(*) FROM " + schema + ".jobs WHERE queue = 'reports'"
                        + " AND state = 'available'");
                assertTrue(waiting > 0, "the paused queue's new jobs wait");
                long defaultDuring = WorkerTest.scalar("SELECT count(*) FROM " + schema + ".runs WHERE queue = 'default'")
                        - defaultRuns;
                assertTrue(defaultDuring > 0, "the other queue runs on");

                assertTrue(queue.resumeQueue("reports"));
                assertTrue(queue.pausedQueues().isEmpty());
                producing.set(false);
                producer.join();
                WorkerTest.await("every job to run after the resume", () -> WorkerTest.scalar(
                        "SELECT count(*) FROM " + schema + ".jobs WHERE state <> 'completed'") == 0);
                long jobs = WorkerTest.scalar("SELECT count(*) FROM " + schema + ".jobs");
                assertEquals(enqueued.get(), jobs);
                assertEquals(jobs, WorkerTest.scalar("SELECT count(DISTINCT job_id) FROM " + schema + ".runs"),
                        "every job ran");
                System.out.printf("pause across 3 worker processes: reports jobs started before the pause %d, after it"
                        + " %d; %d waited through 2 s of pause while %d default jobs ran; %d jobs enqueued, all"
                        + " completed after the resume%n", before, 0, waiting, defaultDuring, jobs);
            } finally {
                producing.set(false);
                producer.join();
                ChildProcesses.stop(workers);
            }
        }
    }

    @Test
    void aResumeWakesAnIdleWorkerAtOnce() throws Exception {
        try (FlexiQ queue = TestDatabase.client()) {
            assertTrue(queue.pauseQueue("default"));
            AtomicLong ran = new AtomicLong();
            // Polling alone would find the job a minute later.
            Worker worker = queue.worker().pollInterval(Duration.ofMinutes(1))
                    .handle(PauseChild.STEP, (step, job) -> ran.incrementAndGet()).build().start();
            try {
                String id = queue.enqueue(PauseChild.STEP, new Step(0));
                Thread.sleep(500);
                assertEquals(0, ran.get(), "a job of a paused queue ran");
                assertEquals(JobState.AVAILABLE, queue.getJob(id).orElseThrow().state());
                assertTrue(queue.resumeQueue("default"));
                WorkerTest.await("the resumed queue's job to run", () -> ran.get() == 1);
            } finally {
                worker.close();
            }
            assertFalse(queue.resumeQueue("default"), "not paused");
        }
    }

    @Test
    void aQueueNameIsCheckedAsEnqueueChecksIt() {
        try (FlexiQ queue = TestDatabase.client()) {
            IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () -> queue.pauseQueue(""));
            assertTrue(empty.getMessage().contains("queue"), empty.getMessage());
            assertThrows(IllegalArgumentException.class, () -> queue.resumeQueue("q".repeat(129)));
            assertThrows(IllegalArgumentException.class, () -> queue.pauseQueue(null));
            assertTrue(queue.pausedQueues().isEmpty());
        }
    }
}
