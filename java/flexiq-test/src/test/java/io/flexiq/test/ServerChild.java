package io.flexiq.test;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A JVM of its own for {@link ServerProcessesTest}. {@code hold}: starts a server, prints
 * {@code started <pid> <port> <directory> <embedded>} and waits to be killed. {@code exercise}:
 * starts a server, keeps a row across shutDown and restart, closes it, and prints
 * {@code ok embedded=<embedded>}.
 */
final class ServerChild {
    private ServerChild() {}

    public static void main(String[] args) throws Exception {
        PostgresServer pg = PostgresServer.builder().durable(false).start();
        if (args[0].equals("hold")) {
            System.out.println("started " + ProcessHandle.current().pid() + " " + pg.port() + " "
                    + pg.directory() + " " + pg.embedded());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
        try {
            Db.execute(pg.jdbcUrl(), "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('kept')");
            int port = pg.port();
            pg.shutDown();
            check(!Db.reachable(pg.jdbcUrl()), "server down after shutDown");
            pg.restart();
            check(port == pg.port(), "same port after restart");
            check("kept".equals(Db.query(pg.jdbcUrl(), "SELECT v FROM kept")), "row kept across restart");
        } finally {
            pg.close();
        }
        check(!Files.exists(pg.directory()), "directory deleted by close");
        System.out.println("ok embedded=" + pg.embedded());
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("not so: " + what);
        }
    }

    /** The directory the server of a {@code started …} line lives in. */
    static Path directory(String startedLine) {
        return Path.of(startedLine.split(" ")[3]);
    }
}
