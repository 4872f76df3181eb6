package io.flexiq;

/** What {@link FlexiQ#redrive} did. */
public enum RedriveOutcome {
    /** The dead-lettered job is pending again, its attempts starting over, holding its key again. */
    REDRIVEN,
    /** This redrive key already redrove the job; nothing changed. */
    REPLAYED,
    /**
     * The job's dedup key is held by another active job (see {@link RedriveResult#keyHolderJobId()});
     * nothing changed, so that two active jobs never hold one key. Redrive again once that job
     * has finished, or leave the work to it.
     */
    KEY_HELD,
    /** The job is not dead-lettered; nothing changed. */
    NOT_DEAD,
    /** There is no such job. */
    NOT_FOUND
}
