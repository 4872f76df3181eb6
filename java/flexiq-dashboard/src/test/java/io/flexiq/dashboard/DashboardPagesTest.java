package io.flexiq.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.AesGcmPayloadCodec;
import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.PayloadCodec;
import io.flexiq.Task;
import io.flexiq.Worker;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.PostgresServer;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What the pages show: paging, the redaction hook, escaping. Over plain HTTP; the browser tests drive the rest. */
@ExtendWith(FlexiQExtension.class)
class DashboardPagesTest {
    record Card(String holder, String number) {}

    private static final Task<Card> CHARGE = Task.of("charge", Card.class);
    private static final Pattern ROW = Pattern.compile("<tr><td><a href=\"/jobs/(\\d+)\">");
    private static final Pattern NEXT = Pattern.compile("<a href=\"([^\"]+)\">Next page</a>");

    private final HttpClient http = HttpClient.newHttpClient();
    private final FlexiQ flexiq;
    private Dashboard dashboard;

    DashboardPagesTest(FlexiQ flexiq) {
        this.flexiq = flexiq;
    }

    @BeforeEach
    void start() {
        dashboard = Dashboard.builder(flexiq).port(0).authenticator(DashboardAuthenticator.permitAllOnLoopback())
                .redactor((job, payload) -> payload.replaceAll("\"number\":\"\\d+(\\d{4})\"", "\"number\":\"…$1\""))
                .start();
    }

    @AfterEach
    void stop() {
        dashboard.close();
    }

    @Test
    void pagesThroughAQueueNewestFirst() throws Exception {
        for (int i = 0; i < 60; i++) {
            flexiq.enqueue(CHARGE, new Card("holder " + i, "4000000000000" + (100 + i)),
                    EnqueueOptions.builder().queue("paging").build());
        }
        String first = get("/jobs?state=available&queue=paging");
        assertEquals(50, count(ROW.matcher(first)));
        Matcher next = NEXT.matcher(first);
        assertTrue(next.find(), first);
        String second = get(next.group(1).replace("&amp;", "&"));
        assertEquals(10, count(ROW.matcher(second)));
        assertFalse(NEXT.matcher(second).find(), "the last page links no further");

        Matcher firstIds = ROW.matcher(first);
        firstIds.find();
        long newest = Long.parseLong(firstIds.group(1));
        Matcher secondIds = ROW.matcher(second);
        secondIds.find();
        assertTrue(Long.parseLong(secondIds.group(1)) < newest, "newest first, across pages");
    }

    @Test
    void showsPayloadsThroughTheRedactorAndEscapesWhatJobsCarry() throws Exception {
        String id = flexiq.enqueue(CHARGE, new Card("<script>alert(1)</script>", "4111111111111111"),
                EnqueueOptions.builder().queue("<b>bold</b>").build());
        String page = get("/jobs/" + id);
        assertTrue(page.contains("&quot;number&quot;:&quot;…1111&quot;"), page);
        assertFalse(page.contains("4111111111111111"), "the redactor's output only");
        assertFalse(page.contains("<script>alert"), "escaped");
        assertTrue(page.contains("&lt;b&gt;bold&lt;/b&gt;"), page);
    }

    @Test
    void encryptedPayloadsShowOnlyWhereTheApplicationSaysSo(PostgresServer server) throws Exception {
        AesGcmPayloadCodec codec = AesGcmPayloadCodec.builder().key("k1", new byte[32]).build();
        try (FlexiQ encrypting = FlexiQ.builder(server.url()).schema(flexiq.schema()).payloadCodec(codec).build()) {
            String id = encrypting.enqueue(CHARGE, new Card("Ada Lovelace", "4242424242424242"));

            String withoutCodec = get(dashboard, "/jobs/" + id);
            assertTrue(withoutCodec.contains("payload codec aes-256-gcm"), withoutCodec);
            assertFalse(withoutCodec.contains("Lovelace"), withoutCodec);
            try (Dashboard byDefault = Dashboard.builder(encrypting).port(0)
                    .authenticator(DashboardAuthenticator.permitAllOnLoopback()).start()) {
                String hidden = get(byDefault, "/jobs/" + id);
                assertTrue(hidden.contains("encoded by payload codec aes-256-gcm: not shown"), hidden);
                assertFalse(hidden.contains("Lovelace"), hidden);
            }
            try (Dashboard showing = Dashboard.builder(encrypting).port(0)
                    .authenticator(DashboardAuthenticator.permitAllOnLoopback()).redactor(PayloadRedactor.showAll())
                    .start()) {
                String shown = get(showing, "/jobs/" + id);
                assertTrue(shown.contains("Ada Lovelace"), shown);
            }
        }
    }

    /** A payload codec that counts what it decodes. */
    private static final class CountingCodec implements PayloadCodec {
        final AtomicInteger decoded = new AtomicInteger();
        private final PayloadCodec codec = AesGcmPayloadCodec.builder().key("k1", new byte[32]).build();

        @Override
        public String id() {
            return codec.id();
        }

        @Override
        public byte[] encode(String task, byte[] payload) {
            return codec.encode(task, payload);
        }

        @Override
        public byte[] decode(String task, byte[] stored) {
            decoded.incrementAndGet();
            return codec.decode(task, stored);
        }
    }

    @Test
    void payloadsTheRedactorHidesAreNeitherReadNorDecrypted(PostgresServer server) throws Exception {
        CountingCodec codec = new CountingCodec();
        try (FlexiQ encrypting = FlexiQ.builder(server.url()).schema(flexiq.schema()).payloadCodec(codec).build()) {
            String id = encrypting.enqueue(CHARGE, new Card("Grace Hopper", "5555555555554444"));
            for (PayloadRedactor hiding : List.of(PayloadRedactor.showUnencrypted(), PayloadRedactor.hideAll())) {
                try (Dashboard byDefault = Dashboard.builder(encrypting).port(0)
                        .authenticator(DashboardAuthenticator.permitAllOnLoopback()).redactor(hiding).start()) {
                    String page = get(byDefault, "/jobs/" + id);
                    assertFalse(page.contains("Hopper"), page);
                }
            }
            assertEquals(0, codec.decoded.get());
            try (Dashboard showing = Dashboard.builder(encrypting).port(0)
                    .authenticator(DashboardAuthenticator.permitAllOnLoopback()).redactor(PayloadRedactor.showAll())
                    .start()) {
                assertTrue(get(showing, "/jobs/" + id).contains("Grace Hopper"));
            }
            assertEquals(1, codec.decoded.get());
        }
    }

    @Test
    void submittingOneRedriveFormTwiceRedrivesOnce() throws Exception {
        String id = flexiq.enqueue(CHARGE, new Card("holder", "4000000000000002"),
                EnqueueOptions.builder().queue("redrive-twice").maxAttempts(1).build());
        Worker worker = flexiq.worker().queues("redrive-twice").pollInterval(Duration.ofMillis(20))
                .handle(CHARGE, (card, job) -> {
                    throw new IllegalStateException("declined");
                }).build().start();
        try {
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (flexiq.getJob(id).orElseThrow().state() != JobState.DEAD) {
                assertTrue(System.nanoTime() < end, "the job was not dead-lettered");
                Thread.sleep(20);
            }
        } finally {
            worker.close();
        }
        HttpResponse<String> page = send("/jobs/" + id);
        String cookie = page.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
        Matcher token = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(page.body());
        Matcher redriveKey = Pattern.compile("name=\"redriveKey\" value=\"([^\"]+)\"").matcher(page.body());
        assertTrue(token.find() && redriveKey.find(), page.body());
        String form = "csrf=" + token.group(1) + "&redriveKey=" + redriveKey.group(1);

        List<String> notices = new ArrayList<>();
        for (int submit = 0; submit < 2; submit++) {
            HttpRequest post = HttpRequest.newBuilder(dashboard.uri().resolve("/jobs/" + id + "/redrive"))
                    .header("Cookie", cookie).header("Content-Type", "application/x-www-form-urlencoded")
                    .POST(HttpRequest.BodyPublishers.ofString(form)).build();
            HttpResponse<String> response = http.send(post, HttpResponse.BodyHandlers.ofString());
            assertEquals(303, response.statusCode(), response.body());
            notices.add(response.headers().firstValue("Location").orElseThrow());
        }
        assertEquals(List.of("/jobs/" + id + "?notice=redriven", "/jobs/" + id + "?notice=replayed"), notices);
        assertTrue(get(notices.get(1)).contains("This redrive key already redrove this job"));
        assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state());
    }

    @Test
    void answersWhatFlexiQRefusesWithItsReason() throws Exception {
        HttpResponse<String> outOfRange = send("/jobs/9999999999999999999");
        assertEquals(400, outOfRange.statusCode(), outOfRange.body());
        assertTrue(outOfRange.body().contains("not a FlexiQ job id"), outOfRange.body());
        assertEquals(404, send("/jobs/123456").statusCode());
        assertEquals(404, send("/nowhere").statusCode());
    }

    private String get(String path) throws Exception {
        return get(dashboard, path);
    }

    private String get(Dashboard target, String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(target.uri().resolve(path)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertEquals(200, response.statusCode(), response.body());
        return response.body();
    }

    private HttpResponse<String> send(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(dashboard.uri().resolve(path)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static int count(Matcher matcher) {
        int count = 0;
        while (matcher.find()) {
            count++;
        }
        return count;
    }
}
