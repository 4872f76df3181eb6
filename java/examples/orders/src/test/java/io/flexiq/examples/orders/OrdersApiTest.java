package io.flexiq.examples.orders;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.spring.FlexiQWorkerLifecycle;
import io.flexiq.test.FlexiQPostgres;
import io.flexiq.test.PostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The running service over HTTP, on this JVM's test PostgreSQL. Its JSON is read with Jackson 2,
 * which FlexiQ brings on Spring Boot 3.5 and 4 alike, so that the test runs on both.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"flexiq.worker.poll-interval=200ms", "flexiq.connect-timeout=2s"})
@FlexiQPostgres
@ExtendWith(OutputCaptureExtension.class)
class OrdersApiTest {
    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @Value("${local.server.port}")
    int port;
    @Autowired
    ApplicationContext context;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    FlexiQ flexiq;
    @Autowired
    OrderService orders;
    @Autowired
    TransactionTemplate transactions;
    @Autowired
    PostgresServer postgres;
    @Autowired
    DataSource dataSource;

    @Test
    void aDoublePostGivesOneJobAndOneCharge(CapturedOutput output) throws Exception {
        String order = "order-" + UUID.randomUUID();
        JsonNode first = post(order, 1200);
        JsonNode again = post(order, 1200);
        assertEquals(first.get("chargeJobId").asText(), again.get("chargeJobId").asText());

        String jobId = first.get("chargeJobId").asText();
        await("the charge job completes",
                () -> flexiq.getJob(jobId).map(j -> j.state() == JobState.COMPLETED).orElse(false));
        assertEquals("charged", jdbc.queryForObject("SELECT status FROM orders WHERE id = ?", String.class, order));
        assertEquals(1, jdbc.queryForObject("SELECT count(*) FROM payments WHERE order_id = ?", Long.class, order));
        // The handler's own log line names its job.
        String line = output.getOut().lines().filter(l -> l.contains("charged order " + order)).findFirst()
                .orElseThrow();
        assertTrue(line.contains(" INFO job " + jobId + " "), line);
    }

    @Test
    void aFailedChargeIsLoggedAtWarnWithTheJobIdAndCounted(CapturedOutput output) throws Exception {
        String order = "order-" + UUID.randomUUID();
        String jobId = post(order, JdbcPaymentGateway.LIMIT_CENTS + 1).get("chargeJobId").asText();
        String logged = "job " + jobId + " (task charge_order, queue default): attempt 1 of ";
        await("the failed attempt is logged", () -> output.getOut().contains(logged));
        String line = output.getOut().lines().filter(l -> l.contains(logged)).findFirst().orElseThrow();
        assertTrue(line.contains(" WARN "), line);
        assertTrue(line.contains("over the limit"), line);
        assertEquals("placed", jdbc.queryForObject("SELECT status FROM orders WHERE id = ?", String.class, order));
        // The failed attempt shows in /actuator/metrics, once FlexiQ's listener has counted it.
        await("the failed attempt is counted", () -> failedCharges() >= 1);
    }

    private double failedCharges() {
        try {
            HttpResponse<String> response = get("/actuator/metrics/flexiq.attempts?tag=task:charge_order&tag=result:failed");
            if (response.statusCode() == 404) {
                return 0;   // no such attempt counted yet
            }
            assertEquals(200, response.statusCode(), response.body());
            return json.readTree(response.body()).get("measurements").get(0).get("value").asDouble();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void theSameOrderIdWithAnotherAmountIsAConflict() throws Exception {
        String order = "order-" + UUID.randomUUID();
        post(order, 1200);
        String body = json.writeValueAsString(new OrderController.OrderRequest(order, 9900));
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(409, response.statusCode(), response.body());
    }

    @Test
    void aRolledBackOrderLeavesNoJob() {
        String order = "order-" + UUID.randomUUID();
        String jobId = transactions.execute(status -> {
            String id = orders.placeOrder(order, 500);
            status.setRollbackOnly();
            return id;
        });
        assertFalse(flexiq.getJob(jobId).isPresent());
        assertEquals(0, jdbc.queryForObject("SELECT count(*) FROM orders WHERE id = ?", Long.class, order));
        // The key went with the rolled-back job: placing the order again enqueues anew.
        String placed = orders.placeOrder(order, 500);
        assertFalse(placed.equals(jobId));
    }

    @Test
    void healthShowsFlexiQUpAndDownWhilePostgresIsStopped(CapturedOutput output) throws Exception {
        HttpResponse<String> up = get("/actuator/health");
        assertEquals(200, up.statusCode(), up.body());
        JsonNode flexiqHealth = json.readTree(up.body()).get("components").get("flexiq");
        assertEquals("UP", flexiqHealth.get("status").asText());
        assertEquals("running", flexiqHealth.get("details").get("worker").asText());

        postgres.shutDown();
        try {
            HttpResponse<String> down = get("/actuator/health");
            assertEquals(503, down.statusCode(), down.body());
            JsonNode flexiqDown = json.readTree(down.body()).get("components").get("flexiq");
            assertEquals("DOWN", flexiqDown.get("status").asText());
            assertTrue(flexiqDown.get("details").get("error").asText().contains("PostgreSQL is unavailable"),
                    flexiqDown.toString());
            // A probe during an outage says so in its answer, not with a stack trace in the log.
            assertFalse(output.getAll().contains("FlexiQ health check failed"), output.getAll());
        } finally {
            postgres.restart();
            // Hikari would drop its dead connections one failed borrow at a time; the tests
            // that follow should not each meet one.
            ((HikariDataSource) dataSource).getHikariPoolMXBean().softEvictConnections();
        }
        await("FlexiQ's health is up again", () -> {
            try {
                return json.readTree(get("/actuator/health").body()).get("components").get("flexiq").get("status")
                        .asText().equals("UP");
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void theWorkerStopsInThePhaseOfTheWebServersGracefulShutdown() {
        SmartLifecycle gracefulShutdown = context.getBean("webServerGracefulShutdown", SmartLifecycle.class);
        assertEquals(gracefulShutdown.getPhase(), context.getBean(FlexiQWorkerLifecycle.class).getPhase());
    }

    private JsonNode post(String order, long amountCents) throws Exception {
        String body = json.writeValueAsString(new OrderController.OrderRequest(order, amountCents));
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, response.statusCode(), response.body());
        return json.readTree(response.body());
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** Waits for a condition that the worker or the pool brings about in its own time. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting until " + what, e);
            }
        }
    }
}
