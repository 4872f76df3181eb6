package io.flexiq;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Optional;

/**
 * A schedule as the processes declaring it describe it (see {@link FlexiQ#schedules()}): each
 * renews its declaration before every tick.
 *
 * @param name the schedule's name
 * @param cron its cron expression
 * @param zone the zone its expression is read in
 * @param task the task of its jobs
 * @param queue the queue of its jobs
 * @param lastTick its latest tick before now, if it had one
 * @param lastTickJobId the job of that tick, if one was enqueued (and not yet deleted)
 * @param nextTick its next tick
 * @param triggerable whether {@link FlexiQ#triggerSchedule} can enqueue it: false when the
 *     declaring client encrypts payloads or the schedule's options use flow control
 * @param lastDeclared when a declaring process last renewed it, by PostgreSQL's clock
 * @param pausedAt when it was paused, if it is
 */
public record DeclaredSchedule(String name, String cron, ZoneId zone, String task, String queue,
        Optional<Instant> lastTick, Optional<String> lastTickJobId, Instant nextTick, boolean triggerable,
        Instant lastDeclared, Optional<Instant> pausedAt) {}
