package io.flexiq;

/**
 * What one maintenance pass did (see {@link Maintenance} and {@link FlexiQ#runMaintenance()}).
 *
 * @param keysReleased keys of finished jobs released because their retention had passed
 * @param jobsRescued jobs whose lease had passed, due again for another attempt
 * @param jobsDeadLettered jobs dead-lettered because their lease passed on their last attempt or
 *     their deadline passed before they started
 * @param completedDeleted completed jobs deleted, their retention passed
 * @param cancelledDeleted cancelled jobs deleted, their retention passed
 * @param deadDeleted dead jobs deleted, their retention passed
 * @param workersRemoved registrations of workers removed because they stopped heartbeating for a
 *     whole lease (see {@link RegisteredWorker})
 * @param moreToDelete whether the pass stopped at its cap with jobs left to delete
 */
public record MaintenanceReport(long keysReleased, int jobsRescued, int jobsDeadLettered, long completedDeleted,
        long cancelledDeleted, long deadDeleted, long workersRemoved, boolean moreToDelete) {

    /** How many finished jobs the pass deleted, of every state. */
    public long deleted() {
        return completedDeleted + cancelledDeleted + deadDeleted;
    }
}
