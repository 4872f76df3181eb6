package io.flexiq;

import java.util.List;
import java.util.Optional;

/**
 * One page of {@link FlexiQ#listJobs}: jobs newest first, and the cursor of the next page when
 * there are more. Immutable.
 *
 * @param jobs the jobs, newest first, at most the query's limit
 * @param nextCursor for {@link JobQuery.Builder#after} to get the next page; empty on the last
 */
public record JobPage(List<JobInfo> jobs, Optional<String> nextCursor) {
    /** A page; the list is copied. */
    public JobPage {
        jobs = List.copyOf(jobs);
    }
}
