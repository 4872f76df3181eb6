package io.flexiq.examples.orders;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * The service as a Spring Boot executable jar, laid out as Boot's Gradle and Maven plugins lay it
 * out (this build's Gradle is too old for them): the loader's classes at the root, the service's
 * classes and resources under {@code BOOT-INF/classes/}, its libraries, uncompressed, under
 * {@code BOOT-INF/lib/}. Made from what the build passes to the tests: the system properties
 * {@code orders.bootJar.loader} (spring-boot-loader's jar) and {@code orders.bootJar.classpath}
 * (the service's runtime class path).
 */
final class BootJar {
    private final JarOutputStream jar;
    private final Set<String> written = new HashSet<>();

    private BootJar(JarOutputStream jar) {
        this.jar = jar;
    }

    /** Writes the jar to {@code target}, with {@code attributes} added to its manifest. */
    static Path write(Path target, Map<String, String> attributes) throws IOException {
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.put(Attributes.Name.MAIN_CLASS, "org.springframework.boot.loader.launch.JarLauncher");
        main.putValue("Start-Class", OrdersApplication.class.getName());
        main.putValue("Spring-Boot-Classes", "BOOT-INF/classes/");
        main.putValue("Spring-Boot-Lib", "BOOT-INF/lib/");
        attributes.forEach(main::putValue);
        try (OutputStream out = Files.newOutputStream(target); JarOutputStream stream = new JarOutputStream(out, manifest)) {
            BootJar boot = new BootJar(stream);
            boot.loader(Paths.get(property("orders.bootJar.loader")));
            List<Path> libraries = new ArrayList<>();
            for (String entry : property("orders.bootJar.classpath").split(File.pathSeparator)) {
                Path path = Paths.get(entry);
                if (Files.isDirectory(path)) {
                    boot.classes(path);
                } else if (entry.endsWith(".jar") && Files.isRegularFile(path)) {
                    libraries.add(path);
                }
            }
            for (Path library : libraries) {
                boot.stored("BOOT-INF/lib/" + library.getFileName(), Files.readAllBytes(library));
            }
        }
        return target;
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("the build passes no " + name + " to the tests (see java/examples/orders/shared.gradle)");
        }
        return value;
    }

    /** The loader's classes, at the root, where the JVM finds the jar's main class. */
    private void loader(Path loaderJar) throws IOException {
        try (JarFile loader = new JarFile(loaderJar.toFile())) {
            Enumeration<JarEntry> entries = loader.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                if (entry.getName().startsWith("META-INF/")) {
                    continue;
                }
                if (entry.isDirectory()) {
                    directory(entry.getName());
                } else {
                    try (InputStream in = loader.getInputStream(entry)) {
                        file(entry.getName(), in.readAllBytes());
                    }
                }
            }
        }
    }

    private void classes(Path root) throws IOException {
        List<Path> paths;
        try (Stream<Path> walk = Files.walk(root)) {
            paths = walk.sorted().toList();
        }
        for (Path path : paths) {
            String name = "BOOT-INF/classes/" + root.relativize(path).toString().replace(File.separatorChar, '/');
            if (Files.isDirectory(path)) {
                directory(name.endsWith("/") ? name : name + "/");
            } else {
                file(name, Files.readAllBytes(path));
            }
        }
    }

    /** A directory entry, with its parents, as jar tools write them. */
    private void directory(String name) throws IOException {
        if (name.isEmpty()) {
            return;
        }
        int slash = name.lastIndexOf('/', name.length() - 2);
        if (slash > 0) {
            directory(name.substring(0, slash + 1));
        }
        if (written.add(name)) {
            jar.putNextEntry(new JarEntry(name));
            jar.closeEntry();
        }
    }

    private void file(String name, byte[] bytes) throws IOException {
        directory(name.substring(0, name.lastIndexOf('/') + 1));
        if (written.add(name)) {
            jar.putNextEntry(new JarEntry(name));
            jar.write(bytes);
            jar.closeEntry();
        }
    }

    /** An uncompressed entry: Spring Boot's loader reads nested jars only so. */
    private void stored(String name, byte[] bytes) throws IOException {
        directory(name.substring(0, name.lastIndexOf('/') + 1));
        CRC32 crc = new CRC32();
        crc.update(bytes);
        JarEntry entry = new JarEntry(name);
        entry.setMethod(JarEntry.STORED);
        entry.setSize(bytes.length);
        entry.setCompressedSize(bytes.length);
        entry.setCrc(crc.getValue());
        if (written.add(name)) {
            jar.putNextEntry(entry);
            jar.write(bytes);
            jar.closeEntry();
        }
    }
}
