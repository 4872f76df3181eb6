package io.flexiq;

import java.util.Optional;

/**
 * The outcome of {@link FlexiQ#redrive}, and for {@link RedriveOutcome#KEY_HELD} the job holding
 * the key.
 *
 * @param outcome what happened
 * @param keyHolderJobId the active job holding the dead job's key, for {@code KEY_HELD}
 */
public record RedriveResult(RedriveOutcome outcome, Optional<String> keyHolderJobId) {}
