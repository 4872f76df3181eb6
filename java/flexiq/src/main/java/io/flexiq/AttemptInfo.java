package io.flexiq;

import java.time.Instant;
import java.util.Optional;

/**
 * One attempt of a job (see {@link FlexiQ#attempts(String)}).
 *
 * @param attempt its number, from 1 (a redrive starts the count again)
 * @param startedAt when its claim started it
 * @param finishedAt when it ended; empty while it runs
 * @param worker the process whose claim started it, as {@code host:pid}; empty for attempts
 *     started before FlexiQ kept it
 * @param outcome {@code running}, {@code completed}, {@code failed} or {@code lease expired}
 * @param error the handler's error with its stack trace (bounded as {@link JobInfo#lastError()}
 *     is), or why the lease expired
 */
public record AttemptInfo(int attempt, Instant startedAt, Optional<Instant> finishedAt, Optional<String> worker,
        String outcome, Optional<String> error) {}
