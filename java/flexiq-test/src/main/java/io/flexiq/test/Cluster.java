package io.flexiq.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;

/**
 * A running PostgreSQL cluster in a directory of its own, however its binaries were found.
 * {@link PostgresServer} calls one method at a time.
 */
interface Cluster {
    /** The loopback port the server listens on; the same after {@link #restart()}. */
    int port();

    /** Where the binaries came from, for messages. */
    String binaries();

    /** The directory holding the cluster, its log and its socket; deleted by {@link #stop()}. */
    Path directory();

    /** Stops the server (fast: sessions are cut) and keeps its files. */
    void shutDown();

    /** Stops the server as a crash would (immediate shutdown) and keeps its files. */
    void crash();

    /** Starts the server again after {@link #shutDown()} or {@link #crash()}, on the same port. */
    void restart();

    /** Stops the server if it runs and deletes its directory. */
    void stop();

    /**
     * A loopback port free at this moment. Another process may take it before the server binds
     * it, which is why starting retries on a port found taken.
     */
    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new PostgresServerException("could not find a free port on 127.0.0.1: " + e, e);
        }
    }
}
