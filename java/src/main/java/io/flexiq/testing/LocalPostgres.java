package io.flexiq.testing;

import io.flexiq.internal.NativeBridge;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A private PostgreSQL server, started from the machine's PostgreSQL binaries in a fresh
 * temporary directory and deleted by {@link #close()}. It listens on a free loopback port and
 * trusts local connections. If the JVM dies without closing it, a watchdog process stops and
 * deletes it.
 *
 * <p>For tests, demos and benchmarks that need the real thing. The binaries are taken from
 * {@code FLEXIQ_PG_BIN}, else the newest {@code /usr/lib/postgresql/<N>/bin}, else
 * {@code pg_config --bindir}; when the JVM runs as root the server runs as the
 * {@code postgres} OS user.
 */
public final class LocalPostgres implements AutoCloseable {
    private final long handle;
    private final String url;
    private final AtomicBoolean closed = new AtomicBoolean();

    private LocalPostgres(long handle) {
        this.handle = handle;
        this.url = NativeBridge.localPostgresUrl(handle);
    }

    /** Starts a server that commits durably (fsync and synchronous commit on), as production does. */
    public static LocalPostgres start() {
        return new LocalPostgres(NativeBridge.startLocalPostgres(true, null, null));
    }

    /** Starts a server that skips fsync: faster, for tests whose data may be lost with the machine. */
    public static LocalPostgres startFast() {
        return new LocalPostgres(NativeBridge.startLocalPostgres(false, null, null));
    }

    /**
     * Starts a server like {@link #startFast()} that also serves TLS ({@code ssl = on}) with the
     * given PEM certificate and private key. The files are copied into the server's directory;
     * clients still choose whether to use TLS ({@code sslmode} in the URL).
     *
     * @param certificate the server's certificate
     * @param privateKey the certificate's private key
     */
    public static LocalPostgres startFastWithTls(Path certificate, Path privateKey) {
        return new LocalPostgres(NativeBridge.startLocalPostgres(false,
                certificate.toAbsolutePath().toString(), privateKey.toAbsolutePath().toString()));
    }

    /** A {@code postgres://} URL for the superuser on the default database. */
    public String url() {
        return url;
    }

    /** The same server as a JDBC URL. */
    public String jdbcUrl() {
        return url.replaceFirst("^postgres://postgres@", "jdbc:postgresql://") + "?user=postgres";
    }

    /**
     * Shuts the server down (fast: open sessions are cut), keeping its files, for tests of what
     * clients do while PostgreSQL is away; {@link #restart()} brings it back on the same port.
     */
    public void shutDown() {
        NativeBridge.setLocalPostgresRunning(handle, false);
    }

    /** Starts the server again after {@link #shutDown()}, on the same port and with the same data. */
    public void restart() {
        NativeBridge.setLocalPostgresRunning(handle, true);
    }

    /** Stops the server and deletes its directory. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            NativeBridge.stopLocalPostgres(handle);
        }
    }
}
