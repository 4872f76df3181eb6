package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The Java API through a real PgBouncer (Debian's package) in transaction mode, in front of the
 * test server: refused without a direct URL, naming the fix; with one, one job per key under a
 * race, enqueues on the application's pgjdbc connection through the pooler, and a worker woken
 * by a new job.
 */
class PgBouncerTest {
    private static final Task<EnqueueTest.Order> CHARGE = EnqueueTest.CHARGE;

    /** A PgBouncer in transaction mode with three server sessions, stopped when closed. */
    static final class Bouncer implements AutoCloseable {
        private final Path dir;
        private final Process process;
        final int port;

        Bouncer(int serverPort) throws Exception {
            dir = Files.createTempDirectory("flexiq-pgbouncer", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwxr-xr-x")));
            try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
                port = free.getLocalPort();
            }
            Path ini = dir.resolve("pgbouncer.ini");
            Files.writeString(ini, "[databases]\n* = host=127.0.0.1 port=" + serverPort + " user=postgres\n"
                    + "[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = " + port + "\nunix_socket_dir =\n"
                    + "auth_type = any\npool_mode = transaction\ndefault_pool_size = 3\nmax_client_conn = 500\n"
                    + "logfile = " + dir.resolve("pgbouncer.log") + "\npidfile = " + dir.resolve("pgbouncer.pid") + "\n");
            List<String> command = new ArrayList<>();
            // PgBouncer refuses to run as root, as the tests do in CI.
            if ("root".equals(System.getProperty("user.name"))) {
                new ProcessBuilder("chown", "-R", "postgres:postgres", dir.toString()).inheritIO().start().waitFor();
                command.addAll(List.of("runuser", "-u", "postgres", "--"));
            }
            command.addAll(List.of("/usr/sbin/pgbouncer", ini.toString()));
            process = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("stdout").toFile()).start();
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (true) {
                try {
                    new Socket("127.0.0.1", port).close();
                    break;
                } catch (IOException notYet) {
                    if (System.nanoTime() > end || !process.isAlive()) {
                        throw new AssertionError("PgBouncer did not start: " + Files.readString(dir.resolve("stdout")));
                    }
                    Thread.sleep(20);
                }
            }
        }

        String url() {
            return "postgres://postgres@127.0.0.1:" + port + "/postgres";
        }

        @Override
        public void close() throws IOException {
            Path pid = dir.resolve("pgbouncer.pid");
            if (Files.exists(pid)) {
                new ProcessBuilder("kill", Files.readString(pid).trim()).start();
            }
            process.destroy();
            new ProcessBuilder("rm", "-rf", dir.toString()).start();
        }
    }

    private static int serverPort() {
        return URI.create(TestDatabase.url()).getPort();
    }

    @Test
    void withoutADirectUrlTheClientIsRefusedAtStartNamingTheFix() throws Exception {
        try (Bouncer bouncer = new Bouncer(serverPort())) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> FlexiQ.builder(bouncer.url()).schema(TestDatabase.freshSchema()).build().close());
            assertTrue(refused.getMessage().contains("transaction mode")
                    && refused.getMessage().contains("directUrl"), refused.getMessage());
        }
    }

    @Test
    void withADirectUrlKeysRacesTheApplicationsConnectionAndWakeUpsHold() throws Exception {
        try (Bouncer bouncer = new Bouncer(serverPort());
                FlexiQ queue = FlexiQ.builder(bouncer.url()).directUrl(TestDatabase.url())
                        .schema(TestDatabase.freshSchema()).poolSize(8).migrate(true).build()) {
            // 16 threads × 50 calls on one key: one job, every call its id.
            EnqueueOptions once = EnqueueOptions.builder().idempotencyKey("bounced-once").build();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            Set<String> ids = ConcurrentHashMap.newKeySet();
            List<Future<?>> calls = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                calls.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        ids.add(queue.enqueue(CHARGE, new EnqueueTest.Order(1, 1), once));
                    }
                    return null;
                }));
            }
            for (Future<?> call : calls) {
                call.get();
            }
            pool.shutdown();
            assertEquals(1, ids.size(), "one job for one key");

            // The application's own pgjdbc connection through the pooler, in autocommit and in a
            // transaction: pgjdbc's named statements are off, as the connections guide says.
            String jdbc = "jdbc:postgresql://127.0.0.1:" + bouncer.port + "/postgres?user=postgres&prepareThreshold=0";
            int enqueued = 0;
            try (Connection c = DriverManager.getConnection(jdbc)) {
                for (int i = 0; i < 20; i++) {
                    queue.enqueue(c, CHARGE, new EnqueueTest.Order(2, i));
                    enqueued++;
                }
                c.setAutoCommit(false);
                for (int i = 0; i < 20; i++) {
                    queue.enqueue(c, CHARGE, new EnqueueTest.Order(3, i),
                            EnqueueOptions.builder().uniqueKey("in-tx-" + i).build());
                    enqueued++;
                }
                c.commit();
            }
            assertEquals(40, enqueued);

            // A worker, idle, hears of the jobs through the direct URL's listener and runs them all.
            Set<String> ran = ConcurrentHashMap.newKeySet();
            WorkerTest.running(queue.worker().handle(CHARGE, (order, job) -> ran.add(job.jobId()))
                    .pollInterval(Duration.ofMinutes(10)), () -> {
                WorkerTest.await("the 41 jobs to run", () -> ran.size() == 41);
                String late = queue.enqueue(CHARGE, new EnqueueTest.Order(4, 4));
                WorkerTest.await("a wake-up to run a new job", () -> ran.contains(late));
            });
        }
    }
}
