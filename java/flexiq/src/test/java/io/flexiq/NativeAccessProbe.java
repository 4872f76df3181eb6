package io.flexiq;

import java.nio.charset.StandardCharsets;

/** Run by {@link NativeAccessTest} on Java 22 or later: loads the native library and uses it once. */
public final class NativeAccessProbe {
    private NativeAccessProbe() {}

    /** No arguments; prints a derived key, which only the native core computes. */
    public static void main(String[] args) {
        System.out.println(DedupKeys.autoKey("probe", "{}".getBytes(StandardCharsets.UTF_8)));
    }
}
