package io.flexiq;

/**
 * A worker activity's run of failures, logged once: the first failure as a warning, its
 * repeats only at debug level, and the end of the run as information. An outage then says what
 * it interrupted and when it ended, not the same warning many times a second.
 */
final class Trouble {
    private static final System.Logger LOG = System.getLogger(Worker.class.getName());

    private final String activity;
    private int failures;

    /** {@code activity} completes "… failed", e.g. "claiming jobs". */
    Trouble(String activity) {
        this.activity = activity;
    }

    /** Reports a failure; {@code next} says what happens now, e.g. "trying again in 50 ms". */
    synchronized void failed(RuntimeException e, String next) {
        failures++;
        if (failures == 1) {
            LOG.log(System.Logger.Level.WARNING, activity + " failed; " + next + ": " + e.getMessage());
        } else {
            LOG.log(System.Logger.Level.DEBUG, activity + " failed again (" + failures + " in a row); " + next, e);
        }
    }

    /** Reports a success, which ends a run of failures. */
    synchronized void succeeded() {
        if (failures > 0) {
            LOG.log(System.Logger.Level.INFO, activity + " works again after " + failures + " failures");
            failures = 0;
        }
    }
}
