package io.flexiq.demo;

import io.flexiq.DedupKeys;
import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueRequest;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.IdempotencyConflictException;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.PostgresServer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * FlexiQ in seven stories: a double-click, a webhook redelivery, a key reused for a different
 * request, a bulk enqueue with duplicates, an order and its charge in one transaction, a worker
 * running the charges (one fails once and is retried), and flow control (a debounce and a
 * throttle).
 *
 * <p>Uses the database in {@code FLEXIQ_DATABASE_URL}; without one it starts a private
 * PostgreSQL from the machine's binaries and removes it at exit.
 */
public final class Demo {
    private Demo() {}

    /** The demo's payload. */
    public record Order(long customerId, long amountCents) {}

    /** A webhook's payload. */
    public record Delivery(String provider, String eventId) {}

    /** A product edit, for the flow-control story. */
    public record Edit(String productId, int revision) {}

    static final Task<Order> CHARGE_CUSTOMER = Task.of("charge_customer", Order.class).idempotent(true);
    static final Task<Delivery> HANDLE_WEBHOOK = Task.of("handle_webhook", Delivery.class);
    static final Task<Edit> REINDEX = Task.of("reindex_product", Edit.class);
    static final Task<Edit> NOTIFY_FOLLOWERS = Task.of("notify_followers", Edit.class);

    /** Runs the demo. */
    public static void main(String[] args) {
        String url = System.getenv("FLEXIQ_DATABASE_URL");
        if (url != null && !url.isEmpty()) {
            System.out.println(DatabaseUrl.header(url));
            if (DatabaseUrl.refusal(url).isPresent()) {
                System.exit(2);
            }
            run(url);
            return;
        }
        System.out.println("FLEXIQ_DATABASE_URL is not set: starting a private PostgreSQL...");
        try (PostgresServer postgres = PostgresServer.start()) {
            System.out.println("  listening at " + postgres.url());
            run(postgres.url());
        }
        System.out.println("private PostgreSQL stopped and removed");
    }

    private static void run(String url) {
        String schema = "flexiq_demo_" + ProcessHandle.current().pid();
        try (FlexiQ queue = FlexiQ.builder(url).schema(schema).migrate(true).build()) {
            doubleClick(queue);
            webhookRedelivery(queue);
            conflict(queue);
            List<String> charges = new ArrayList<>(bulk(queue));
            charges.add(inTransaction(queue, url));
            work(queue, charges);
            flowControl(queue);
            queue.dropSchema();
            System.out.println("\nschema " + schema + " dropped");
        }
    }

    private static void doubleClick(FlexiQ queue) {
        heading("1. A double-click on \"Place order\" (task idempotent: key derived from task and payload)");
        Order order = new Order(42, 1000);
        show("first click ", queue.enqueueWithResult(CHARGE_CUSTOMER, order));
        show("second click", queue.enqueueWithResult(CHARGE_CUSTOMER, order));
        byte[] canonical = "{\"amountCents\":1000,\"customerId\":42}".getBytes(StandardCharsets.UTF_8);
        System.out.println("  derived key of {\"amountCents\":1000,\"customerId\":42}: "
                + DedupKeys.autoKey("charge_customer", canonical));
    }

    private static void webhookRedelivery(FlexiQ queue) {
        heading("2. A webhook delivered again after its job completed");
        // An idempotencyKey stays bound for 24 hours from acceptance, finished job or not.
        Delivery delivery = new Delivery("payments", "evt_1001");
        EnqueueOptions byEvent = EnqueueOptions.builder().idempotencyKey("payments:evt_1001").build();
        EnqueueResult first = queue.enqueueWithResult(HANDLE_WEBHOOK, delivery, byEvent);
        show("delivery              ", first);
        queue.markCompleted(first.jobId());
        System.out.println("  (job " + first.jobId() + " completed)");
        show("redelivery within 24 h", queue.enqueueWithResult(HANDLE_WEBHOOK, delivery, byEvent));

        // A uniqueKey coalesces only while its job is pending or running.
        Delivery other = new Delivery("payments", "evt_1002");
        EnqueueOptions whileActive = EnqueueOptions.builder().uniqueKey("payments:evt_1002").build();
        EnqueueResult once = queue.enqueueWithResult(HANDLE_WEBHOOK, other, whileActive);
        show("delivery, unique key  ", once);
        queue.markCompleted(once.jobId());
        System.out.println("  (job " + once.jobId() + " completed)");
        show("redelivery, unique key", queue.enqueueWithResult(HANDLE_WEBHOOK, other, whileActive));
    }

    private static void conflict(FlexiQ queue) {
        heading("3. The same key reused for a different request");
        EnqueueOptions key = EnqueueOptions.builder().uniqueKey("refund:order-77").build();
        show("refund 500 ", queue.enqueueWithResult(HANDLE_WEBHOOK, new Delivery("refunds", "500"), key));
        try {
            queue.enqueue(HANDLE_WEBHOOK, new Delivery("refunds", "900"),
                    EnqueueOptions.builder().uniqueKey("refund:order-77").priority(5).build());
        } catch (IdempotencyConflictException e) {
            System.out.println("  refund 900  -> IdempotencyConflictException: job " + e.existingJobId().orElse("?")
                    + ", fields " + e.fields());
            System.out.println("               " + e.getMessage());
        }
    }

    private static List<String> bulk(FlexiQ queue) {
        heading("4. A bulk enqueue with duplicates (one statement)");
        List<EnqueueRequest<Order>> batch = List.of(
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(42, 1000)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(43, 2500)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(43, 2500)),
                EnqueueRequest.of(CHARGE_CUSTOMER, new Order(44, 700)));
        List<EnqueueResult> results = queue.enqueueManyWithResults(batch);
        for (int i = 0; i < results.size(); i++) {
            show("entry " + i + " " + batch.get(i).payload(), results.get(i));
        }
        return results.stream().map(EnqueueResult::jobId).distinct().toList();
    }

    private static String inTransaction(FlexiQ queue, String url) {
        heading("5. An order and its charge in the application's own transaction (JDBC)");
        String orders = queue.schema() + ".orders";
        try (Connection c = jdbc(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + orders + " (customer_id bigint, amount_cents bigint)");
            }
            c.setAutoCommit(false);
            String id = placeOrder(queue, c, orders, "order saved, charge enqueued");
            c.rollback();
            System.out.println("  ...the request fails, ROLLBACK: orders " + count(c, orders) + ", charge job " + id
                    + (queue.getJob(id).isPresent() ? " still there" : " gone with it"));
            id = placeOrder(queue, c, orders, "retried request (key free) ");
            c.commit();
            System.out.println("  COMMIT: orders " + count(c, orders) + ", charge job " + id + " "
                    + queue.getJob(id).orElseThrow().state() + " (workers were woken by the commit)");
            return id;
        } catch (SQLException e) {
            throw new IllegalStateException("the JDBC story failed: " + e.getMessage(), e);
        }
    }

    /** Saves customer 45's order and enqueues its charge, in the connection's transaction. */
    private static String placeOrder(FlexiQ queue, Connection c, String orders, String label) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("INSERT INTO " + orders + " VALUES (45, 1200)");
        }
        EnqueueResult charge = queue.enqueueWithResult(c, CHARGE_CUSTOMER, new Order(45, 1200),
                EnqueueOptions.builder().idempotencyKey("charge:order-45").build());
        show(label, charge);
        return charge.jobId();
    }

    /** A JDBC connection to the database of a {@code postgres://user:password@host:port/db} URL. */
    private static Connection jdbc(String url) throws SQLException {
        java.net.URI uri = java.net.URI.create(url);
        Properties props = new Properties();
        String[] user = uri.getRawUserInfo() == null ? new String[0] : uri.getRawUserInfo().split(":", 2);
        if (user.length > 0) {
            props.setProperty("user", URLDecoder.decode(user[0], StandardCharsets.UTF_8));
        }
        if (user.length > 1) {
            props.setProperty("password", URLDecoder.decode(user[1], StandardCharsets.UTF_8));
        }
        String query = uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery();
        return DriverManager.getConnection("jdbc:postgresql://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort())
                + uri.getRawPath() + query, props);
    }

    private static long count(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT count(*) FROM " + table)) {
            r.next();
            return r.getLong(1);
        }
    }

    private static void work(FlexiQ queue, List<String> charges) {
        heading("6. A worker runs the charges (customer 44's card is declined once, then retried)");
        Set<Long> declinedOnce = ConcurrentHashMap.newKeySet();
        Worker worker = queue.worker()
                .handle(CHARGE_CUSTOMER, (order, job) -> {
                    boolean decline = order.customerId() == 44 && declinedOnce.add(order.customerId());
                    System.out.printf("  job %s, attempt %d of %d: charge customer %d %d cents%s%n", job.jobId(),
                            job.attempt(), job.maxAttempts(), order.customerId(), order.amountCents(),
                            decline ? " -> declined" : " -> done");
                    if (decline) {
                        throw new IllegalStateException("card declined");
                    }
                })
                .pollInterval(Duration.ofMillis(200))
                .build()
                .start();
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!charges.stream().allMatch(id -> queue.getJob(id).orElseThrow().state() == JobState.COMPLETED)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the charges did not complete in time");
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            worker.close();
        }
        for (String id : charges) {
            JobInfo job = queue.getJob(id).orElseThrow();
            System.out.println("  job " + id + ": " + job.state() + " after " + job.attempt() + " attempt(s)");
        }
    }

    /** A product edited five times in a burst, and its followers told of it. */
    private static void flowControl(FlexiQ queue) {
        heading("7. Flow control: five quick edits reindex once (debounce), followers hear once an hour (throttle)");
        List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        Worker worker = queue.worker()
                .handle(REINDEX, (edit, job) -> ran.add("  job " + job.jobId() + ": reindex product " + edit.productId()
                        + " at revision " + edit.revision()))
                .pollInterval(Duration.ofMillis(100))
                .build()
                .start();
        try {
            String reindexed = null;
            for (int revision = 1; revision <= 5; revision++) {
                EnqueueResult r = queue.enqueueWithResult(REINDEX, new Edit("p-7", revision), EnqueueOptions.builder()
                        .uniqueKey("reindex:p-7").debounce(Duration.ofMillis(500)).build());
                show("edit, revision " + revision, r);
                reindexed = r.jobId();
            }
            for (int edit = 1; edit <= 3; edit++) {
                show("tell followers #" + edit, queue.enqueueWithResult(NOTIFY_FOLLOWERS, new Edit("p-7", edit),
                        EnqueueOptions.builder().uniqueKey("notify:p-7").throttle(Duration.ofHours(1)).build()));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (queue.getJob(reindexed).orElseThrow().state() != JobState.COMPLETED) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the reindex did not complete in time");
                }
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            worker.close();
        }
        ran.forEach(System.out::println);
    }

    private static void heading(String text) {
        System.out.println();
        System.out.println(text);
    }

    private static void show(String label, EnqueueResult result) {
        System.out.println("  " + label + " -> job " + result.jobId() + ", " + result.outcome());
    }
}
