/**
 * FlexiQ's engine: not part of the API, and may change in any release. Applications use
 * {@code io.flexiq} (and {@code io.flexiq.micrometer}); nothing here is meant to be called from
 * outside the library, and its types are public only so that the library's own packages can
 * reach them.
 *
 * <p>This package is the boundary with the native core: every native call
 * ({@link io.flexiq.internal.NativeBridge}), the wire format its messages use, the codes states
 * and outcomes cross as, loading the native library, and the input limits checked before anything
 * crosses ({@link io.flexiq.internal.Limits}, {@link io.flexiq.internal.Durations}). Its
 * subpackages hold the engine, one role each:
 * <ul>
 *   <li>{@code client}: what {@code FlexiQ} does besides enqueueing: its operations on jobs,
 *       and what it runs in the background (workers, schedules, maintenance);</li>
 *   <li>{@code enqueue}: batches on their way to the core, the enqueue on the application's
 *       connection, the dedup key rules, and how payloads are stored (codecs);</li>
 *   <li>{@code worker}: what a {@code Worker} runs, its parts (claiming, running attempts,
 *       keeping leases, recording outcomes) and the store through which they reach PostgreSQL;</li>
 *   <li>{@code schedule}: the thread that enqueues the ticks of a client's schedules;</li>
 *   <li>{@code maintenance}: a client's part in its schema's maintenance;</li>
 *   <li>{@code observability}: a client's listeners and the report of its failures.</li>
 * </ul>
 *
 * <h2>How the engine and the API reach each other</h2>
 *
 * <p>{@code io.flexiq} calls into these packages directly: what it uses is public here. The
 * engine uses the API's public members like any caller. Where it needs what an API type keeps
 * package-private (the constructor of an event, a result or a job's context; state a serializer
 * keeps to itself), it goes through {@link io.flexiq.internal.ApiAccess}, which
 * {@code io.flexiq} implements and registers, and nothing else: no member of an API type is
 * public for the engine's sake. Each engine class that needs it keeps it in a constant,
 * {@code private static final ApiAccess API = ApiAccess.get();}, so that each call compiles to
 * a direct call of the member. Logic that needs only the public API (the dedup key rules, say)
 * lives in the engine, and the API type that documents it calls it.
 */
package io.flexiq.internal;
