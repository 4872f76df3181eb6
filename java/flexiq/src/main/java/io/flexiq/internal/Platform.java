package io.flexiq.internal;

import java.util.Locale;

/**
 * An OS and CPU as the JVM names them ({@code os.name}, {@code os.arch}), and where the jar
 * carries the native library for them: {@code io/flexiq/native/<folder>/<library file>}.
 *
 * @param osName the JVM's {@code os.name}, for example {@code Mac OS X} or {@code Windows 11}
 * @param osArch the JVM's {@code os.arch}, for example {@code aarch64} or {@code amd64}
 */
record Platform(String osName, String osArch) {
    /** The platform this JVM runs on. */
    static Platform current() {
        return new Platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /** The folder in the jar: {@code linux-x86_64}, {@code macos-aarch64}, {@code windows-x86_64}, .... */
    String folder() {
        return os() + "-" + arch();
    }

    /**
     * The file name of the library {@code name} on this platform, as {@link System#mapLibraryName}
     * gives it there: {@code flexiq_jni.dll}, {@code libflexiq_jni.dylib}, {@code libflexiq_jni.so}.
     */
    String libraryFile(String name) {
        switch (os()) {
            case "windows":
                return name + ".dll";
            case "macos":
                return "lib" + name + ".dylib";
            default:
                return "lib" + name + ".so";
        }
    }

    /** The folder with the JVM's own words, for messages: {@code plan9-mips (os.name "Plan 9", os.arch "mips")}. */
    @Override
    public String toString() {
        return folder() + " (os.name \"" + osName + "\", os.arch \"" + osArch + "\")";
    }

    private String os() {
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

    private String arch() {
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
