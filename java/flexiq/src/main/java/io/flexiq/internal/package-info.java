/**
 * FlexiQ's engine: not part of the API, and may change in any release. Applications use
 * {@code io.flexiq} (and {@code io.flexiq.micrometer}); nothing here is meant to be called from
 * outside the library, and its types are public only so that the library's own packages can
 * reach them.
 *
 * <p>This package is the boundary with the native core: every native call
 * ({@link io.flexiq.internal.NativeBridge}), the wire format its messages use, the codes states
 * and outcomes cross as, loading the native library, and the input limits checked before anything
 * crosses ({@link io.flexiq.internal.Limits}, {@link io.flexiq.internal.Durations}).
 */
package io.flexiq.internal;
