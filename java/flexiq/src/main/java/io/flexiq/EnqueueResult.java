package io.flexiq;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The job an enqueue resolved to, and how PostgreSQL decided it. Immutable. */
public final class EnqueueResult {
    private final String jobId;
    private final EnqueueOutcome outcome;
    private final NonReplaceableReason reason;

    EnqueueResult(String jobId, EnqueueOutcome outcome, NonReplaceableReason reason) {
        this.jobId = Objects.requireNonNull(jobId);
        this.outcome = Objects.requireNonNull(outcome);
        this.reason = reason;
    }

    /** The job ids of some results, in their order. */
    static List<String> ids(List<EnqueueResult> results) {
        List<String> ids = new ArrayList<>(results.size());
        for (EnqueueResult r : results) {
            ids.add(r.jobId);
        }
        return ids;
    }

    /** The id of the job that holds the request: new, or the one already holding its key. */
    public String jobId() {
        return jobId;
    }

    /** What happened. */
    public EnqueueOutcome outcome() {
        return outcome;
    }

    /** Why a debounce was {@link EnqueueOutcome#NON_REPLACEABLE}; empty for every other outcome. */
    public Optional<NonReplaceableReason> reason() {
        return Optional.ofNullable(reason);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EnqueueResult
                && jobId.equals(((EnqueueResult) o).jobId)
                && outcome == ((EnqueueResult) o).outcome
                && Objects.equals(reason, ((EnqueueResult) o).reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(jobId, outcome, reason);
    }

    @Override
    public String toString() {
        return "EnqueueResult[" + jobId + ", " + outcome + (reason == null ? "]" : ", " + reason + "]");
    }
}
