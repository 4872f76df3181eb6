package io.flexiq.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobState;
import io.flexiq.Task;
import io.flexiq.test.FlexiQExtension;
import java.net.InetAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Authentication, binding, CSRF and read-only GETs of the standalone dashboard, over plain HTTP. */
@ExtendWith(FlexiQExtension.class)
class DashboardSecurityTest {
    private static final Task<String> NOTE = Task.of("note", String.class);
    private static final Pattern TOKEN = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");

    private final HttpClient http = HttpClient.newHttpClient();
    private final FlexiQ flexiq;
    private Dashboard dashboard;

    DashboardSecurityTest(FlexiQ flexiq) {
        this.flexiq = flexiq;
    }

    @BeforeEach
    void start() {
        dashboard = Dashboard.builder(flexiq).port(0).authenticator(DashboardAuthenticator.basic("ops", "s3cret")).start();
    }

    @AfterEach
    void stop() {
        dashboard.close();
    }

    @Test
    void refusesToStartWithoutAnAuthenticator() {
        IllegalStateException refused = assertThrows(IllegalStateException.class,
                () -> Dashboard.builder(flexiq).port(0).start());
        assertTrue(refused.getMessage().contains("authenticator"), refused.getMessage());
    }

    @Test
    void listensOnLoopbackByDefault() {
        assertTrue(dashboard.address().getAddress().isLoopbackAddress(), dashboard.address().toString());
    }

    @Test
    void refusesRequestsWithoutTheCredentials() throws Exception {
        HttpResponse<String> anonymous = send(get("/"));
        assertEquals(401, anonymous.statusCode());
        assertEquals(Optional.of("Basic realm=\"FlexiQ\", charset=\"UTF-8\""),
                anonymous.headers().firstValue("WWW-Authenticate"));
        assertEquals(401, send(get("/").header("Authorization", basic("ops", "wrong"))).statusCode());
        assertEquals(401, send(get("/").header("Authorization", "Basic %%%")).statusCode());

        HttpResponse<String> signedIn = send(get("/").header("Authorization", basic("ops", "s3cret")));
        assertEquals(200, signedIn.statusCode());
        assertTrue(signedIn.body().contains("<h1>Queues</h1>"), signedIn.body());
        assertEquals(Optional.of("DENY"), signedIn.headers().firstValue("X-Frame-Options"));
        assertEquals(Optional.of("no-store"), signedIn.headers().firstValue("Cache-Control"));
        String policy = signedIn.headers().firstValue("Content-Security-Policy").orElseThrow();
        assertTrue(policy.startsWith("default-src 'none'; style-src 'sha256-"), policy);
        String cookie = signedIn.headers().firstValue("Set-Cookie").orElseThrow();
        assertTrue(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), cookie);
    }

    @Test
    void loopbackOptInAdmitsThisMachineOnly() throws Exception {
        DashboardAuthenticator local = DashboardAuthenticator.permitAllOnLoopback();
        assertEquals(Optional.of("local"), local.authenticate(
                new AuthenticationRequest(name -> null, InetAddress.getLoopbackAddress())));
        assertEquals(Optional.empty(), local.authenticate(
                new AuthenticationRequest(name -> null, InetAddress.getByAddress(new byte[] {10, 1, 2, 3}))));
    }

    @Test
    void postsNeedTheTokenOfTheirOwnSession() throws Exception {
        String id = flexiq.enqueue(NOTE, "hello", EnqueueOptions.builder().queue("security").build());
        Session mine = session();
        Session other = session();
        String cancel = "/jobs/" + id + "/cancel";

        assertEquals(403, send(post(cancel, null, "")).statusCode(), "no cookie, no token");
        assertEquals(403, send(post(cancel, mine.cookie, "")).statusCode(), "no token");
        assertEquals(403, send(post(cancel, mine.cookie, "csrf=" + other.token)).statusCode(), "another session's token");
        assertEquals(403, send(post(cancel, null, "csrf=" + mine.token)).statusCode(), "token without its cookie");
        assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state(), "refused posts changed nothing");

        HttpResponse<String> accepted = send(post(cancel, mine.cookie, "csrf=" + mine.token));
        assertEquals(303, accepted.statusCode());
        assertEquals(Optional.of("/jobs/" + id + "?notice=cancelled"), accepted.headers().firstValue("Location"));
        assertEquals(JobState.CANCELLED, flexiq.getJob(id).orElseThrow().state());
    }

    @Test
    void getsNeverChangeAnything() throws Exception {
        String id = flexiq.enqueue(NOTE, "hello", EnqueueOptions.builder().queue("security").build());
        for (String action : new String[] {"cancel", "purge", "redrive"}) {
            HttpResponse<String> response = send(get("/jobs/" + id + "/" + action + "?csrf=" + session().token)
                    .header("Authorization", basic("ops", "s3cret")));
            assertEquals(405, response.statusCode(), action);
        }
        assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state());
        assertFalse(flexiq.getJob(id).isEmpty(), "not purged");
    }

    @Test
    void pausingAQueueTakesAPostWithTheSessionsToken() throws Exception {
        Session mine = session();
        assertEquals(403, send(post("/queues/pause", mine.cookie, "queue=csrf-probe")).statusCode(), "no token");
        assertEquals(405, send(get("/queues/pause?queue=csrf-probe&csrf=" + mine.token)
                .header("Cookie", mine.cookie).header("Authorization", basic("ops", "s3cret"))).statusCode());
        assertFalse(flexiq.pausedQueues().stream().anyMatch(p -> p.queue().equals("csrf-probe")),
                "refused requests paused nothing");

        String form = "queue=csrf-probe&csrf=" + mine.token;
        HttpResponse<String> paused = send(post("/queues/pause", mine.cookie, form));
        assertEquals(303, paused.statusCode());
        assertEquals(Optional.of("/?notice=paused"), paused.headers().firstValue("Location"));
        assertEquals(Optional.of("/?notice=already_paused"),
                send(post("/queues/pause", mine.cookie, form)).headers().firstValue("Location"), "a double submit");
        assertEquals(Optional.of("/?notice=resumed"),
                send(post("/queues/resume", mine.cookie, form)).headers().firstValue("Location"));
        assertEquals(Optional.of("/?notice=not_paused"),
                send(post("/queues/resume", mine.cookie, form)).headers().firstValue("Location"));
        assertEquals(400, send(post("/queues/pause", mine.cookie, "csrf=" + mine.token)).statusCode(), "no queue");
    }

    @Test
    void aBulkActionTakesAPostWithTheSessionsTokenAndItsReviewChangesNothing() throws Exception {
        String id = flexiq.enqueue(NOTE, "hello", EnqueueOptions.builder().queue("bulk-probe").build());
        Session mine = session();
        String form = "action=cancel&state=available&queue=bulk-probe";
        assertEquals(403, send(post("/bulk", mine.cookie, form)).statusCode(), "no token");
        HttpResponse<String> review = send(get("/bulk?" + form + "&csrf=" + mine.token)
                .header("Cookie", mine.cookie).header("Authorization", basic("ops", "s3cret")));
        assertEquals(200, review.statusCode());
        assertTrue(review.body().contains("<strong>1 job</strong>"), review.body());
        assertEquals(JobState.AVAILABLE, flexiq.getJob(id).orElseThrow().state(), "a review changes nothing");
        assertEquals(400, send(post("/bulk", mine.cookie, "action=redrive&state=available&csrf=" + mine.token))
                .statusCode(), "an action that does not fit the state");

        HttpResponse<String> done = send(post("/bulk", mine.cookie, form + "&csrf=" + mine.token));
        assertEquals(303, done.statusCode());
        assertEquals(Optional.of("/jobs?state=available&queue=bulk-probe&notice=bulk&changed=1&selected=1"),
                done.headers().firstValue("Location"));
        assertEquals(JobState.CANCELLED, flexiq.getJob(id).orElseThrow().state());
    }

    @Test
    void scheduleActionsTakeAPostWithTheSessionsToken() throws Exception {
        Session mine = session();
        for (String action : new String[] {"pause", "resume", "trigger"}) {
            assertEquals(403, send(post("/schedules/" + action, mine.cookie, "name=nightly")).statusCode(), action);
            assertEquals(405, send(get("/schedules/" + action + "?name=nightly&csrf=" + mine.token)
                    .header("Cookie", mine.cookie).header("Authorization", basic("ops", "s3cret"))).statusCode(), action);
        }
        assertEquals(Optional.of("/schedules?notice=schedule_unchanged"),
                send(post("/schedules/pause", mine.cookie, "name=nightly&csrf=" + mine.token)).headers()
                        .firstValue("Location"), "no such schedule: nothing changed");
        assertEquals(400, send(post("/schedules/trigger", mine.cookie, "name=nightly&at=soon&csrf=" + mine.token))
                .statusCode());
    }

    /** A browser session: its cookie and the token its forms carry. */
    private record Session(String cookie, String token) {}

    private Session session() throws Exception {
        HttpResponse<String> page = send(get("/").header("Authorization", basic("ops", "s3cret")));
        String cookie = page.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
        Matcher token = TOKEN.matcher(page.body());
        assertTrue(token.find(), page.body());
        return new Session(cookie, token.group(1));
    }

    private HttpRequest.Builder get(String path) {
        return HttpRequest.newBuilder(dashboard.uri().resolve(path)).GET();
    }

    private HttpRequest.Builder post(String path, String cookie, String form) {
        HttpRequest.Builder request = HttpRequest.newBuilder(dashboard.uri().resolve(path))
                .header("Authorization", basic("ops", "s3cret"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form));
        return cookie == null ? request : request.header("Cookie", cookie);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }
}
