package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The JVM's os.name and os.arch map to the folders and file names the build packs the library under. */
class PlatformTest {
    @ParameterizedTest
    @CsvSource({
        // os.name, os.arch, where the jar carries the library
        "Linux, amd64, /io/flexiq/native/linux-x86_64/libflexiq_jni.so",
        "Linux, aarch64, /io/flexiq/native/linux-aarch64/libflexiq_jni.so",
        "Mac OS X, aarch64, /io/flexiq/native/macos-aarch64/libflexiq_jni.dylib",
        "Mac OS X, x86_64, /io/flexiq/native/macos-x86_64/libflexiq_jni.dylib",
        "Darwin, arm64, /io/flexiq/native/macos-aarch64/libflexiq_jni.dylib",
        "Windows 11, amd64, /io/flexiq/native/windows-x86_64/flexiq_jni.dll",
        "Windows Server 2022, amd64, /io/flexiq/native/windows-x86_64/flexiq_jni.dll",
        "Windows 11, aarch64, /io/flexiq/native/windows-aarch64/flexiq_jni.dll",
        "FreeBSD, amd64, /io/flexiq/native/freebsd-x86_64/libflexiq_jni.so",
        "Plan 9, mips, /io/flexiq/native/plan9-mips/libflexiq_jni.so",
    })
    void mapsTheJvmsNamesToTheFolderAndFileInTheJar(String osName, String osArch, String resource) {
        assertEquals(resource, NativeLibraryLoader.resourcePath(new Platform(osName, osArch), NativeLibraryLoader.LIBRARY));
    }

    @Test
    void fileNameIsTheOneThisJvmLoads() {
        assertEquals(System.mapLibraryName("flexiq_jni"), Platform.current().libraryFile("flexiq_jni"));
    }

    @Test
    void describesItselfWithTheJvmsOwnWords() {
        assertEquals("windows-x86_64 (os.name \"Windows 10\", os.arch \"amd64\")", new Platform("Windows 10", "amd64").toString());
    }
}
