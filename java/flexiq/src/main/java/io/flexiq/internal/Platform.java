package io.flexiq.internal;

import java.util.Locale;

/** The folder name under which the jar carries the native library for one OS and CPU. */
final class Platform {
    private Platform() {}

    /** For example {@code linux-x86_64} or {@code macos-aarch64}. */
    static String current() {
        return os(System.getProperty("os.name", "")) + "-" + arch(System.getProperty("os.arch", ""));
    }

    static String os(String osName) {
        String name = osName.toLowerCase(Locale.ROOT);
        if (name.startsWith("linux")) {
            return "linux";
        }
        if (name.startsWith("mac") || name.startsWith("darwin")) {
            return "macos";
        }
        if (name.startsWith("windows")) {
            return "windows";
        }
        return name.replaceAll("[^a-z0-9]", "");
    }

    static String arch(String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
                return "x86_64";
            case "aarch64":
            case "arm64":
                return "aarch64";
            default:
                return arch.replaceAll("[^a-z0-9_]", "");
        }
    }
}
