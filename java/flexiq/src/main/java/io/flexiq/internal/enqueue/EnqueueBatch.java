package io.flexiq.internal.enqueue;

import io.flexiq.CanonicalJsonSerializer;
import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueResult;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.PayloadSerializer;
import io.flexiq.Task;
import io.flexiq.internal.ApiAccess;
import io.flexiq.internal.Limits;
import io.flexiq.internal.NativeBridge;
import io.flexiq.internal.observability.Listeners;
import io.flexiq.internal.observability.Tracing;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Entries on their way to the native core, sent in one call. Each entry's key is resolved here:
 * the call receives the key the options name, or the request to derive it from the payload,
 * never the inputs it came from. With {@link CanonicalJsonSerializer} the payload crosses as
 * Jackson's JSON and the core puts it in canonical form before deriving the key, so that an
 * enqueue crosses JNI once; with a payload codec, which encodes canonical bytes, the call's
 * payloads cross once more before it, together, to be put in canonical form. When the client
 * has listeners, each entry's outcome is published once the statement returns (for the
 * application's connection: before its transaction ends). With tracing on, the call is a span,
 * whose context each entry carries to be stored with its job.
 */
public final class EnqueueBatch {
    private static final ApiAccess API = ApiAccess.get();

    private final int size;
    private final NativeBridge.Enqueue call;
    private final StoredPayloads stored;
    /** The client's retention for explicit keys, or null. */
    private final Duration explicitKeyRetention;
    /**
     * The client's listeners, and for them each entry's task, queue and explicit key (null when
     * it names none); null when none listen.
     */
    private final Listeners listeners;
    private final List<String[]> entries;
    /** The client's tracing, or null when it is off. */
    private final Tracing tracing;
    /** The call's span, begun with its first entry; null without tracing. */
    private Tracing.EnqueueSpan span;
    /** The payload bytes added so far, as stored. */
    private long payloadBytes;
    /**
     * With a codec, the entries added since the call was last sent: they are encoded and added
     * to the call when it is sent.
     */
    private final List<Entry> toEncode = new ArrayList<>();

    public EnqueueBatch(int size, StoredPayloads stored, Duration explicitKeyRetention, Listeners listeners) {
        this.size = size;
        this.stored = stored;
        this.explicitKeyRetention = explicitKeyRetention;
        this.listeners = listeners.active() ? listeners : null;
        this.tracing = listeners.tracing();
        boolean described = this.listeners != null || tracing != null;
        this.call = new NativeBridge.Enqueue(size, described);
        this.entries = described ? new ArrayList<>(size) : null;
    }

    /**
     * Serializes the payload, resolves the key and its retention, and appends the entry; with a
     * codec, the entry is encoded when the call is sent.
     */
    public <T> void add(Task<T> task, T payload, EnqueueOptions options, PayloadSerializer serializer) {
        if (tracing != null && span == null) {
            span = tracing.enqueue(task.name(), options.queue(), size);
        }
        try {
            append(task, payload, options, serializer);
        } catch (RuntimeException | Error e) {
            failed(e);
            throw e;
        }
    }

    private <T> void append(Task<T> task, T payload, EnqueueOptions options, PayloadSerializer serializer) {
        byte[] json = serializer instanceof CanonicalJsonSerializer c ? API.jsonForNativeCanonicalForm(c, payload) : null;
        String key = KeyRules.explicitOrNull(options);
        boolean derive = key == null && KeyRules.derives(task, options);
        Entry entry = new Entry(task.name(), json != null ? json : serializer.serialize(payload), json != null, key,
                derive, KeyRules.retentionOrNull(options, derive, explicitKeyRetention), options,
                span == null ? null : span.context());
        if (stored.encodes()) {
            toEncode.add(entry);
        } else {
            place(entry, null);
        }
        if (entries != null) {
            entries.add(new String[] {task.name(), options.queue(), key});
        }
    }

    /** Adds {@code e} to the call, stored as {@code encoded} (null: as its payload). */
    private void place(Entry e, NativeBridge.Encoded encoded) {
        int storedBytes = encoded != null ? encoded.bytes().length : e.payload().length;
        Limits.payloadSize(storedBytes);
        payloadBytes += storedBytes;
        Limits.batchPayloadSize(payloadBytes);
        call.add(e.task(), e.payload(), e.canonicalize(), encoded, e.key(), e.derive(), e.retention(), e.options(),
                e.traceContext());
    }

    /**
     * Encodes the entries that wait for the codec and adds them to the call. The codec encodes
     * canonical bytes, so their JSON is put in canonical form first, all of it in one native call.
     */
    private void encodeWaiting() {
        if (toEncode.isEmpty()) {
            return;
        }
        byte[][] json = toEncode.stream().filter(Entry::canonicalize).map(Entry::payload).toArray(byte[][]::new);
        byte[][] canonical = json.length == 0 ? json : NativeBridge.canonicalJson(json);
        int next = 0;
        for (Entry e : toEncode) {
            byte[] bytes = e.canonicalize() ? canonical[next++] : e.payload();
            place(e.serializedAs(bytes), stored.encode(e.task(), bytes));
        }
        toEncode.clear();
    }

    /**
     * One entry as {@link NativeBridge.Enqueue#add} takes it: its payload serialized, or JSON for
     * the core to put in canonical form ({@code canonicalize}); its key resolved.
     */
    private record Entry(String task, byte[] payload, boolean canonicalize, String key, boolean derive,
            Duration retention, EnqueueOptions options, String traceContext) {
        /** This entry with {@code bytes}, its payload serialized already. */
        Entry serializedAs(byte[] bytes) {
            return new Entry(task, bytes, false, key, derive, retention, options, traceContext);
        }
    }

    /** Sends the batch in one native call (one statement); results in input order. */
    public List<EnqueueResult> send(long client) {
        try {
            encodeWaiting();
            return results(call.send(client));
        } catch (IdempotencyConflictException e) {
            failed(e);
            throw published(e);
        } catch (RuntimeException | Error e) {
            failed(e);
            throw e;
        }
    }

    /**
     * Runs the batch's statement on the application's connection, in its transaction; results
     * in input order. An empty batch touches neither the connection nor the native core.
     */
    public List<EnqueueResult> sendOn(Connection connection, long client) {
        try {
            if (size == 0) {
                return List.of();
            }
            encodeWaiting();
            return results(ConnectionEnqueue.run(connection, client, call));
        } catch (IdempotencyConflictException e) {
            failed(e);
            throw published(e);
        } catch (RuntimeException | Error e) {
            failed(e);
            throw e;
        }
    }

    /** Ends the call's span, if any, with {@code failure}. */
    private void failed(Throwable failure) {
        if (span != null) {
            span.fail(failure);
            span = null;
        }
    }

    private List<EnqueueResult> results(NativeBridge.Enqueued out) {
        List<EnqueueResult> results = new ArrayList<>(size);
        for (int i = 0; i < out.jobIds().length; i++) {
            results.add(API.enqueueResult(Long.toString(out.jobIds()[i]), out.outcomes()[i], out.reasons()[i]));
        }
        if (listeners != null) {
            Instant now = Instant.now();
            for (int i = 0; i < results.size(); i++) {
                String[] e = entries.get(i);
                // The core's view of the key the call named; a derived key is not shown.
                boolean named = e[2] != null;
                listeners.enqueued(API.enqueueEvent(e[0], e[1], results.get(i).outcome(), results.get(i).jobId(),
                        named ? out.keyPreviews()[i] : null, named ? out.keyDigests()[i] : null, now));
            }
        }
        if (span != null) {
            List<String> previews = new ArrayList<>(results.size());
            for (int i = 0; i < results.size(); i++) {
                previews.add(entries.get(i)[2] != null ? out.keyPreviews()[i] : null);
            }
            span.end(results, previews);
            span = null;
        }
        return results;
    }

    private IdempotencyConflictException published(IdempotencyConflictException conflict) {
        if (listeners != null && conflict.entryIndex() >= 0 && conflict.entryIndex() < entries.size()) {
            String[] e = entries.get(conflict.entryIndex());
            listeners.enqueued(API.enqueueEvent(e[0], e[1], null, conflict.existingJobId().orElse(null),
                    conflict.keyPreview(), conflict.keyDigest(), Instant.now()));
        }
        return conflict;
    }
}
