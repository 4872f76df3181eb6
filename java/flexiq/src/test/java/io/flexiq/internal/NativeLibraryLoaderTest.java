package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
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
        NativeLibraryLoader loader = new NativeLibraryLoader(new Platform("Plan 9", "mips"), null, "flexiq_absent", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        String m = e.getMessage();
        assertTrue(m.contains("libflexiq_absent.so could not be loaded for platform plan9-mips (os.name \"Plan 9\", os.arch \"mips\")"), m);
        assertTrue(m.contains("-Dflexiq.native.path: not set"), m);
        assertTrue(m.contains("classpath resource /io/flexiq/native/plan9-mips/libflexiq_absent.so: not found"), m);
        assertTrue(m.contains("System.loadLibrary(\"flexiq_absent\") on java.library.path="), m);
    }

    @Test
    void platformWithoutLibraryInTheJarSaysHowToSupplyOne(@TempDir Path tmp) {
        NativeLibraryLoader loader = new NativeLibraryLoader(new Platform("Windows 11", "aarch64"), null, "flexiq_absent", tmp);
        String m = assertThrows(NativeLibraryException.class, loader::load).getMessage();
        assertTrue(m.contains("flexiq_absent.dll could not be loaded for platform windows-aarch64 (os.name \"Windows 11\", os.arch \"aarch64\")"), m);
        assertTrue(m.endsWith(". This jar carries no library for windows-aarch64: build flexiq-jni for it"
                + " (cargo build --release -p flexiq-jni in FlexiQ's sources, on such a machine) and name the file"
                + " with -Dflexiq.native.path=<file>, or pack it into the jar as io/flexiq/native/windows-aarch64/flexiq_absent.dll"
                + " (see \"Native library loading\" in FlexiQ's architecture guide)"), m);
    }

    @Test
    void libraryBuiltForAnotherPlatformIsRefusedWithItsPath(@TempDir Path tmp) throws Exception {
        byte[] elf = Files.readAllBytes(Paths.get(NativeBridge.loadedFrom()));
        // e_machine (offset 18, little-endian) set to AArch64: a library for another CPU.
        elf[18] = (byte) 0xB7;
        elf[19] = 0;
        Path foreign = tmp.resolve("libflexiq_jni.so");
        Files.write(foreign, elf);
        NativeLibraryLoader loader = new NativeLibraryLoader(Platform.current(), foreign.toString(), "flexiq_jni", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        String m = e.getMessage();
        assertTrue(m.contains("file " + foreign + " from -Dflexiq.native.path: "), m);
        assertTrue(m.contains("AARCH64") || m.contains("machine") || m.contains("ELF"), m);
    }

    @Test
    void overridePathThatDoesNotExistIsNamed(@TempDir Path tmp) {
        Path missing = tmp.resolve("nowhere.so");
        NativeLibraryLoader loader = new NativeLibraryLoader(Platform.current(), missing.toString(), "flexiq_jni", tmp);
        NativeLibraryException e = assertThrows(NativeLibraryException.class, loader::load);
        assertTrue(e.getMessage().contains("file " + missing + " from -Dflexiq.native.path"), e.getMessage());
        // The library named was used or nothing: no advice to build one.
        assertFalse(e.getMessage().contains("carries no library"), e.getMessage());
    }
}
