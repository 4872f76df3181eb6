package io.flexiq.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster run by the machine's own PostgreSQL binaries. {@code initdb} refuses to run as
 * root, so as root every server command runs as the {@code postgres} OS user through
 * {@code runuser}, in a directory that user owns.
 */
final class MachineCluster implements Cluster {
    /** Both the OS user the server runs as under root and the superuser initdb creates. */
    static final String PG_USER = "postgres";
    /** A port found free can be taken before the server binds it; a few fresh picks make that moot. */
    private static final int START_ATTEMPTS = 3;
    /** Generous: several servers starting at once on a 2-core machine can be slow. */
    private static final String PG_CTL_TIMEOUT_SECONDS = "60";
    /** How long to keep connecting after {@code pg_ctl} reported the server up. */
    private static final long TCP_READY_MILLIS = 10_000;

    private final Path bin;
    private final ClusterDirectory dir;
    private final boolean asPgUser;
    private int port;
    private Process watchdog;
    /** Set once a start was tried and until a stop succeeded: a stop may be needed. */
    private boolean mayRun;

    private MachineCluster(Path bin, ClusterDirectory dir, boolean asPgUser) {
        this.bin = bin;
        this.dir = dir;
        this.asPgUser = asPgUser;
    }

    /**
     * Creates a cluster in a fresh directory and starts it; blocks until it accepts TCP
     * connections. On failure everything created is stopped and deleted first.
     *
     * @param asPgUser run the server as the {@code postgres} OS user (we are root)
     */
    static MachineCluster start(ServerSettings settings, boolean asPgUser) {
        Path bin = MachineBinaries.find(System.getenv());
        MachineCluster cluster = new MachineCluster(bin, ClusterDirectory.create(asPgUser ? pgUser() : null), asPgUser);
        try {
            cluster.initdb();
            cluster.startOnFreePort(settings);
            cluster.watchdog = Watchdog.start(cluster.dir);
            return cluster;
        } catch (RuntimeException e) {
            cluster.discard(e);
            throw e;
        }
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String binaries() {
        return bin + (asPgUser ? " as OS user " + PG_USER : "");
    }

    @Override
    public Path directory() {
        return dir.root();
    }

    @Override
    public void shutDown() {
        pgCtlStop("fast");
        mayRun = false;
    }

    @Override
    public void crash() {
        dir.crash();
        mayRun = false;
    }

    @Override
    public void restart() {
        long logFrom = dir.logSize();
        Commands.Result result = pgCtlStart();
        if (!result.succeeded()) {
            throw startFailure(result, logFrom);
        }
        awaitTcp();
    }

    @Override
    public void stop() {
        dir.stopAndDelete(() -> {
            if (mayRun) {
                mayRun = false;
                pgCtlStop("fast");
            }
        }, watchdog);
    }

    private void initdb() {
        Commands.checked(serverCommand("initdb", "-D", dir.data().toString(), "-U", PG_USER, "-A", "trust",
                "-E", "UTF8", "--no-locale", "--no-sync"), dir.root());
    }

    private void startOnFreePort(ServerSettings settings) {
        for (int attempt = 1; ; attempt++) {
            port = Cluster.freePort();
            dir.writeSettings(settings.resolve(port, dir.socket()), settings.files());
            long logFrom = dir.logSize();
            Commands.Result result = pgCtlStart();
            if (result.succeeded()) {
                awaitTcp();
                return;
            }
            boolean portTaken = dir.logTail(logFrom).contains("Address already in use");
            if (!portTaken || attempt == START_ATTEMPTS) {
                throw startFailure(result, logFrom);
            }
        }
    }

    private Commands.Result pgCtlStart() {
        // A timed-out start may leave a server behind that a stop must take down.
        mayRun = true;
        return Commands.run(serverCommand("pg_ctl", "-D", dir.data().toString(), "-l", dir.log().toString(),
                "-w", "-t", PG_CTL_TIMEOUT_SECONDS, "start"), dir.root());
    }

    private void pgCtlStop(String mode) {
        Commands.checked(serverCommand("pg_ctl", "-D", dir.data().toString(), "-m", mode, "-w",
                "-t", PG_CTL_TIMEOUT_SECONDS, "stop"), dir.root());
    }

    private PostgresServerException startFailure(Commands.Result result, long logFrom) {
        return new PostgresServerException("PostgreSQL did not start: " + result.failure() + "\n"
                + dir.quoteLog(logFrom));
    }

    /** {@code pg_ctl -w} proves the postmaster is up; clients come over TCP, so check that path too. */
    private void awaitTcp() {
        long deadline = System.currentTimeMillis() + TCP_READY_MILLIS;
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
                return;
            } catch (IOException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw new PostgresServerException("PostgreSQL reported ready but 127.0.0.1:" + port
                            + " refused TCP connections for " + TCP_READY_MILLIS + " ms (last error: " + e + "); "
                            + dir.quoteLog(0), e);
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PostgresServerException("interrupted while waiting for PostgreSQL on port " + port, e);
            }
        }
    }

    /** Stops and deletes what a failed start left, keeping the first failure as the one to report. */
    private void discard(RuntimeException failure) {
        try {
            if (mayRun && !Commands.run(serverCommand("pg_ctl", "-D", dir.data().toString(), "-m", "immediate",
                    "-w", "stop"), dir.root()).succeeded()) {
                dir.quitPostmaster();
            }
            dir.delete();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** A server binary and its arguments, run as the right OS user. */
    private List<String> serverCommand(String program, String... args) {
        List<String> command = new ArrayList<>();
        if (asPgUser) {
            command.addAll(List.of("runuser", "-u", PG_USER, "--"));
        }
        command.add(bin.resolve(program).toString());
        command.addAll(List.of(args));
        return command;
    }

    private static UserPrincipal pgUser() {
        try {
            return Path.of("/").getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(PG_USER);
        } catch (IOException e) {
            throw new PostgresServerException("running as root, PostgreSQL must run as the OS user " + PG_USER
                    + ", which could not be found (" + e + "); create it, e.g. `useradd --system postgres`", e);
        }
    }
}
