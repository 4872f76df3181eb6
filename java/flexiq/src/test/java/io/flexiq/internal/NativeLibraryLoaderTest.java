package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.NativeLibraryException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading failures name what was looked for and where. */
class NativeLibraryLoaderTest {
    @Test
    void missingLibraryNamesPlatformAndEveryPlaceTried(@TempDir Path tmp) {
        NativeLibraryLoader loader = new NativeLibraryLoader("plan9-mips", null, "flexiq_absent", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        String m = e.getMessage();
        assertTrue(m.contains("libflexiq_absent.so could not be loaded for platform plan9-mips"), m);
        assertTrue(m.contains("-Dflexiq.native.path: not set"), m);
        assertTrue(m.contains("classpath resource /io/flexiq/native/plan9-mips/libflexiq_absent.so: not found"), m);
        assertTrue(m.contains("System.loadLibrary(\"flexiq_absent\") on java.library.path="), m);
    }

    @Test
    void libraryBuiltForAnotherPlatformIsRefusedWithItsPath(@TempDir Path tmp) throws Exception {
        byte[] elf = Files.readAllBytes(Paths.get(NativeBridge.loadedFrom()));
        // e_machine (offset 18, little-endian) set to AArch64: a library for another CPU.
        elf[18] = (byte) 0xB7;
        elf[19] = 0;
        Path foreign = tmp.resolve("libflexiq_jni.so");
        Files.write(foreign, elf);
        NativeLibraryLoader loader = new NativeLibraryLoader("linux-x86_64", foreign.toString(), "flexiq_jni", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        String m = e.getMessage();
        assertTrue(m.contains("file " + foreign + " from -Dflexiq.native.path: "), m);
        assertTrue(m.contains("AARCH64") || m.contains("machine") || m.contains("ELF"), m);
    }

    @Test
    void overridePathThatDoesNotExistIsNamed(@TempDir Path tmp) {
        Path missing = tmp.resolve("nowhere.so");
        NativeLibraryLoader loader = new NativeLibraryLoader("linux-x86_64", missing.toString(), "flexiq_jni", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        assertTrue(e.getMessage().contains("file " + missing + " from -Dflexiq.native.path"), e.getMessage());
    }
}
