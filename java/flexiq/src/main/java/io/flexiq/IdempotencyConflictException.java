package io.flexiq;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * A key was reused for a different request: it is bound to a job accepted with other options or
 * another payload. This is a mistake in the caller, not a duplicate, so neither request silently
 * wins: nothing was written, and the exception names the job holding the key and the fields
 * that differ. The raw key is never part of it, only a short preview and its SHA-256.
 */
public class IdempotencyConflictException extends FlexiQException {
    private static final long serialVersionUID = 1L;

    private final long existingJobId;
    private final int entryIndex;
    private final int earlierEntryIndex;
    private final String keyPreview;
    private final String keyDigest;
    private final List<String> fields;

    /**
     * Created by the native core.
     *
     * @param existingJobId the job holding the key, or -1 when the key's first use is an earlier
     *     entry of the same batch
     * @param entryIndex the conflicting entry of the batch (0 for a single enqueue)
     * @param earlierEntryIndex the earlier entry of the same batch using the key, or -1
     * @param fields comma-separated option names of the differing fields
     */
    public IdempotencyConflictException(String message, long existingJobId, int entryIndex,
            int earlierEntryIndex, String keyPreview, String keyDigest, String fields) {
        super(message);
        this.existingJobId = existingJobId;
        this.entryIndex = entryIndex;
        this.earlierEntryIndex = earlierEntryIndex;
        this.keyPreview = keyPreview;
        this.keyDigest = keyDigest;
        this.fields = fields.isEmpty() ? List.of() : Collections.unmodifiableList(Arrays.asList(fields.split(",")));
    }

    /** The id of the job holding the key; empty when the key's first use was in the same batch. */
    public Optional<String> existingJobId() {
        return existingJobId < 0 ? Optional.empty() : Optional.of(Long.toString(existingJobId));
    }

    /** The index of the conflicting entry in its batch (0 for a single enqueue). */
    public int entryIndex() {
        return entryIndex;
    }

    /** The earlier entry of the same batch that used the key, if that is where it was first used. */
    public Optional<Integer> earlierEntryIndex() {
        return earlierEntryIndex < 0 ? Optional.empty() : Optional.of(earlierEntryIndex);
    }

    /** A bounded preview of the key: never the whole key. */
    public String keyPreview() {
        return keyPreview;
    }

    /** The SHA-256 of the key's UTF-8 bytes, in lowercase hex. */
    public String keyDigest() {
        return keyDigest;
    }

    /** The option names of the fields that differ, such as {@code payload} or {@code priority}. */
    public List<String> fields() {
        return fields;
    }
}
