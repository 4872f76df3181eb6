package io.flexiq.test;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The server settings a {@link PostgresServer} runs with: this package's defaults, then the
 * caller's, which win. Immutable.
 */
final class ServerSettings {
    /** Settings the URL and the readiness check depend on; a caller's value would only break them. */
    private static final Set<String> RESERVED = Set.of("port", "listen_addresses", "unix_socket_directories");
    private static final String TLS_CERTIFICATE = "flexiq-server.crt";
    private static final String TLS_KEY = "flexiq-server.key";

    private final boolean durable;
    private final Map<String, String> extra;
    private final Map<String, Path> files;

    /**
     * {@code extra}: the caller's settings, names in lower case as {@link #validate} returns them;
     * {@code tls}: the certificate and key to serve TLS with, or null.
     */
    ServerSettings(boolean durable, Map<String, String> extra, Path[] tls) {
        this.durable = durable;
        Map<String, String> settings = new LinkedHashMap<>();
        Map<String, Path> copies = new LinkedHashMap<>();
        if (tls != null) {
            copies.put(TLS_CERTIFICATE, tls[0]);
            copies.put(TLS_KEY, tls[1]);
            settings.put("ssl", "on");
            settings.put("ssl_cert_file", TLS_CERTIFICATE);
            settings.put("ssl_key_file", TLS_KEY);
        }
        settings.putAll(extra);
        this.extra = Map.copyOf(settings);
        this.files = Map.copyOf(copies);
    }

    /** Files to copy into the data directory before each start: name there to source. */
    Map<String, Path> files() {
        return files;
    }

    /**
     * Checks that a setting can be written to {@code postgresql.conf} unambiguously, and returns
     * its name in lower case, as PostgreSQL compares them.
     *
     * @throws IllegalArgumentException if it cannot, or if this package manages it
     */
    static String validate(String name, String value) {
        if (name == null || !name.matches("[A-Za-z0-9_.]+")) {
            throw new IllegalArgumentException("invalid setting name " + name
                    + ": names may only contain ASCII letters, digits, '_' and '.'");
        }
        String key = name.toLowerCase(Locale.ROOT);
        if (RESERVED.contains(key)) {
            throw new IllegalArgumentException("setting " + name + " is managed by PostgresServer");
        }
        if (value == null || value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("setting " + name + " needs a value without NUL characters");
        }
        return key;
    }

    /** Every setting for a server on {@code port} with its socket in {@code socketDir}, in order. */
    Map<String, String> resolve(int port, Path socketDir) {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("port", Integer.toString(port));
        all.put("listen_addresses", "127.0.0.1");
        all.put("unix_socket_directories", socketDir.toString());
        // Parallel tests and connection pools add up quickly; the default of 100 is easy to exhaust.
        all.put("max_connections", "200");
        // The same on every machine, and what the embedded binaries would force anyway.
        all.put("timezone", "UTC");
        String commits = durable ? "on" : "off";
        // Fast servers trade crash safety for speed: fine for data nobody keeps.
        all.put("fsync", commits);
        all.put("synchronous_commit", commits);
        all.put("full_page_writes", commits);
        all.putAll(extra);
        return all;
    }

    /** {@code settings} as the text of a configuration file. */
    static String fileText(Map<String, String> settings) {
        StringBuilder text = new StringBuilder("# Written by io.flexiq.test.PostgresServer on every start.\n");
        settings.forEach((name, value) -> text.append(name).append(" = ").append(quote(value)).append('\n'));
        return text.toString();
    }

    /**
     * Quotes a value for {@code postgresql.conf}: quotes doubled, backslashes and line breaks
     * escaped, since the parser reads backslash escapes and allows no raw line break in a string.
     */
    static String quote(String value) {
        StringBuilder quoted = new StringBuilder("'");
        for (char c : value.toCharArray()) {
            switch (c) {
                case '\'' -> quoted.append("''");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                default -> quoted.append(c);
            }
        }
        return quoted.append('\'').toString();
    }
}
