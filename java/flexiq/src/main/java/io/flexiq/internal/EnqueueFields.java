package io.flexiq.internal;

import io.flexiq.EnqueueOptions;
import io.flexiq.NativeLibraryException;
import io.flexiq.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The fields of one enqueue entry as Java writes them, in the order and wire kinds in which the
 * native core reads them. The core declares the job request once ({@code request/fields.rs});
 * this table is its Java side, and it is compared with the core's declaration, as
 * {@code nativeDescribe} reports it, before the first enqueue: a jar and a library from
 * different builds fail there, naming both layouts, rather than enqueueing wrong jobs.
 */
final class EnqueueFields {
    private EnqueueFields() {}

    /** What one entry carries: the resolved key (or the request to derive it) and the options. */
    record Entry(String task, byte[] payload, boolean canonicalize, NativeBridge.Encoded encoded, String key,
            boolean deriveKey, Duration keyRetention, EnqueueOptions options, String traceContext) {}

    /** One field: its name, its wire kind as the core names it, and how it is written. */
    record Field(String name, String kind, BiConsumer<Wire.Writer, Entry> write) {}

    static final List<Field> FIELDS = List.of(
            text("task", Entry::task),
            bool("canonicalize", Entry::canonicalize),
            new Field("payload", "bytes", (w, e) -> w.bytes(e.payload())),
            optText("codec", e -> e.encoded() == null ? null : e.encoded().codec()),
            optBytes("encoded", e -> e.encoded() == null ? null : e.encoded().bytes()),
            optBytes("codecDigest", e -> e.encoded() == null ? null : e.encoded().digest()),
            bool("deriveKey", Entry::deriveKey),
            optText("key", Entry::key),
            text("scope", e -> e.options().scope()),
            text("queue", e -> e.options().queue()),
            new Field("priority", "i32", (w, e) -> w.i32(e.options().priority())),
            optLong("runAt", e -> e.options().runAt().map(NativeBridge::micros)),
            optLong("delay", e -> e.options().delay().map(Duration::toMillis)),
            new Field("maxAttempts", "i32", (w, e) -> w.i32(e.options().maxAttempts())),
            new Field("retryInitialDelay", "i64", (w, e) -> w.i64(retry(e).initialDelay().toMillis())),
            new Field("retryMaxDelay", "i64", (w, e) -> w.i64(retry(e).maxDelay().toMillis())),
            new Field("retryMultiplier", "f64", (w, e) -> w.f64(retry(e).multiplier())),
            new Field("retryJitter", "f64", (w, e) -> w.f64(retry(e).jitter())),
            optLong("timeout", e -> e.options().timeout().map(Duration::toMillis)),
            new Field("tags", "texts", (w, e) -> w.strings(e.options().tags().toArray(new String[0]))),
            optLong("keyRetention", e -> Optional.ofNullable(e.keyRetention()).map(Duration::toMillis)),
            optLong("deadline", e -> e.options().deadline().map(NativeBridge::micros)),
            optText("concurrencyKey", e -> e.options().concurrencyKey().orElse(null)),
            optLong("concurrencyLimit",
                    e -> e.options().concurrencyKey().map(k -> (long) e.options().concurrencyLimit())),
            optLong("debounce", e -> e.options().debounce().map(Duration::toMillis)),
            optLong("maxWait", e -> e.options().maxWait().map(Duration::toMillis)),
            optLong("throttle", e -> e.options().throttle().map(Duration::toMillis)),
            optText("traceContext", Entry::traceContext));

    /** Writes every field of {@code entry}. */
    static void write(Wire.Writer w, Entry entry) {
        for (Field field : FIELDS) {
            field.write().accept(w, entry);
        }
    }

    /**
     * Throws when {@code native} (name and kind of each field the library reads, in order) is not
     * what this table writes.
     */
    static void check(List<String[]> reads) {
        List<String> written = new ArrayList<>(FIELDS.size());
        for (Field field : FIELDS) {
            written.add(field.name() + ":" + field.kind());
        }
        List<String> read = new ArrayList<>(reads.size());
        for (String[] field : reads) {
            read.add(field[0] + ":" + field[1]);
        }
        if (!written.equals(read)) {
            throw new NativeLibraryException("the native library reads an enqueue entry as " + read
                    + " but this jar writes " + written + "; the FlexiQ jar and its native library must come"
                    + " from one build", null);
        }
    }

    private static RetryPolicy retry(Entry e) {
        return e.options().retryPolicy();
    }

    private static Field text(String name, Function<Entry, String> value) {
        return new Field(name, "text", (w, e) -> w.string(value.apply(e)));
    }

    private static Field optText(String name, Function<Entry, String> value) {
        return new Field(name, "optText", (w, e) -> w.string(value.apply(e)));
    }

    private static Field optBytes(String name, Function<Entry, byte[]> value) {
        return new Field(name, "optBytes", (w, e) -> w.bytes(value.apply(e)));
    }

    private static Field bool(String name, Function<Entry, Boolean> value) {
        return new Field(name, "bool", (w, e) -> w.bool(value.apply(e)));
    }

    private static Field optLong(String name, Function<Entry, Optional<Long>> value) {
        return new Field(name, "optI64", (w, e) -> {
            Optional<Long> v = value.apply(e);
            w.optI64(v.isPresent(), v.orElse(0L));
        });
    }
}
