package io.flexiq;

import static io.flexiq.WorkerTest.await;
import static io.flexiq.WorkerTest.job;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexiq.test.FlexiQExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What operators ask: jobs by key, pages of jobs, counts, dead letters, throughput, payloads. */
@ExtendWith(FlexiQExtension.class)
class OperatorQueriesTest {
    /** A payload. */
    public record Invoice(String number, long cents) {}

    static final Task<Invoice> CAPTURE = Task.of("capture_invoice", Invoice.class);
    static final Task<Invoice> REMIND = Task.of("remind_invoice", Invoice.class);

    private static Optional<String> foundId(FlexiQ queue, String scope, String key) {
        return queue.findByKey(scope, key).map(JobInfo::id);
    }

    @Test
    void findByKeyFindsTheJobOfAnExplicitOrDerivedKeyInItsScopeEvenAfterItFinished(FlexiQ queue) {
        String unique = queue.enqueue(CAPTURE, new Invoice("inv-1", 100),
                EnqueueOptions.builder().uniqueKey("capture:inv-1").scope("billing").build());
        String idempotent = queue.enqueue(CAPTURE, new Invoice("inv-2", 200),
                EnqueueOptions.builder().idempotencyKey("capture:inv-2").build());
        Invoice derived = new Invoice("inv-3", 300);
        String auto = queue.enqueue(CAPTURE, derived, EnqueueOptions.builder().idempotent(true).build());

        assertEquals(Optional.of(unique), foundId(queue, "billing", "capture:inv-1"));
        assertEquals(Optional.empty(), foundId(queue, "default", "capture:inv-1"), "scopes keep keys apart");
        assertEquals(Optional.of(idempotent), foundId(queue, "default", "capture:inv-2"));
        String autoKey = DedupKeys.autoKey(CAPTURE.name(),
                "{\"cents\":300,\"number\":\"inv-3\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals(Optional.of(auto), foundId(queue, "default", autoKey));
        assertEquals(Optional.empty(), foundId(queue, "default", "never-used"));

        JobInfo found = queue.findByKey("billing", "capture:inv-1").orElseThrow();
        assertEquals(Optional.of(EnqueueTest.sha256Hex("capture:inv-1")), found.keyDigest());
        assertTrue(found.keyHeld());
        assertTrue(queue.markCompleted(unique));
        JobInfo finished = queue.findByKey("billing", "capture:inv-1").orElseThrow();
        assertEquals(unique, finished.id());
        assertFalse(finished.keyHeld(), "completion released the key; the job is still the one it names");

        String next = queue.enqueue(CAPTURE, new Invoice("inv-1", 100),
                EnqueueOptions.builder().uniqueKey("capture:inv-1").scope("billing").build());
        assertEquals(Optional.of(next), foundId(queue, "billing", "capture:inv-1"), "the new holder");

        assertThrows(IllegalArgumentException.class, () -> queue.findByKey("billing", ""));
        assertThrows(IllegalArgumentException.class, () -> queue.findByKey("", "k"));
    }

    @Test
    void pagesOf50Through120JobsShowEachOnceNewestFirstAndFiltersKeepToTheirJobs() {
        // A schema of its own: the listing without filters shows every job in it.
        try (FlexiQ queue = TestDatabase.client()) {
            pageThrough120Jobs(queue);
        }
    }

    private static void pageThrough120Jobs(FlexiQ queue) {
        List<String> ids = new ArrayList<>();
        List<String> completedInBilling = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Task<Invoice> task = i % 3 == 0 ? REMIND : CAPTURE;
            String queueName = i % 2 == 0 ? "billing" : "mail";
            String id = queue.enqueue(task, new Invoice("inv-" + i, i), EnqueueOptions.builder().queue(queueName).build());
            if (i % 4 == 0) {
                assertTrue(queue.markCompleted(id));
                if (task == REMIND) {
                    completedInBilling.add(id);
                }
            }
            ids.add(id);
        }
        Collections.reverse(ids);
        Collections.reverse(completedInBilling);

        List<Integer> sizes = new ArrayList<>();
        assertEquals(ids, everyPage(queue, JobQuery.builder(), sizes));
        assertEquals(List.of(50, 50, 20), sizes);

        sizes.clear();
        JobQuery.Builder filtered = JobQuery.builder().queue("billing").state(JobState.COMPLETED).task(REMIND.name())
                .limit(3);
        assertEquals(completedInBilling, everyPage(queue, filtered, sizes));
        assertEquals(10, completedInBilling.size());
        assertEquals(List.of(3, 3, 3, 1), sizes);

        assertThrows(IllegalArgumentException.class,
                () -> queue.listJobs(JobQuery.builder().after("not-a-cursor").build()));
        assertThrows(IllegalArgumentException.class, () -> JobQuery.builder().limit(0));
        assertThrows(IllegalArgumentException.class, () -> JobQuery.builder().limit(501));
        assertThrows(IllegalArgumentException.class, () -> JobQuery.builder().queue(""));
    }

    /** The ids of every page of {@code query}, and the size of each page in {@code sizes}. */
    private static List<String> everyPage(FlexiQ queue, JobQuery.Builder query, List<Integer> sizes) {
        List<String> out = new ArrayList<>();
        JobPage page = queue.listJobs(query.build());
        while (true) {
            sizes.add(page.jobs().size());
            page.jobs().forEach(j -> out.add(j.id()));
            if (page.nextCursor().isEmpty()) {
                return out;
            }
            page = queue.listJobs(query.after(page.nextCursor().get()).build());
        }
    }

    @Test
    void deadLettersCarryTheirLastErrorAndFinishedJobsAreCountedAndMeasured() throws Exception {
        // A schema of its own: counts and throughput cover every job in it.
        try (FlexiQ queue = TestDatabase.client()) {
            deadLettersCountsAndThroughput(queue);
        }
    }

    private static void deadLettersCountsAndThroughput(FlexiQ queue) throws Exception {
        String doomed = queue.enqueue(CAPTURE, new Invoice("inv-9", -1),
                EnqueueOptions.builder().queue("billing").maxAttempts(1).build());
        String fine = queue.enqueue(CAPTURE, new Invoice("inv-10", 10), EnqueueOptions.builder().queue("billing").build());
        queue.enqueue(REMIND, new Invoice("inv-11", 11), EnqueueOptions.builder().queue("mail").build());
        WorkerTest.running(queue.worker().queues("billing").handle(CAPTURE, (invoice, job) -> {
            if (invoice.cents() < 0) {
                throw new IllegalStateException("card declined for " + invoice.number());
            }
        }), () -> await("both jobs to finish", () -> job(queue, doomed).state() == JobState.DEAD
                && job(queue, fine).state() == JobState.COMPLETED));

        List<JobInfo> dead = queue.listJobs(JobQuery.builder().state(JobState.DEAD).build()).jobs();
        assertEquals(List.of(doomed), dead.stream().map(JobInfo::id).toList());
        assertEquals("java.lang.IllegalStateException: card declined for inv-9",
                dead.get(0).lastError().orElseThrow().lines().findFirst().orElseThrow());

        assertEquals(List.of(new JobCount("billing", JobState.COMPLETED, 1), new JobCount("billing", JobState.DEAD, 1),
                new JobCount("mail", JobState.AVAILABLE, 1)), sorted(queue.countJobs()));

        List<Throughput> finished = queue.throughput(Duration.ofHours(1));
        assertEquals(1, finished.size(), finished.toString());
        Throughput billing = finished.get(0);
        assertEquals("billing", billing.queue());
        assertEquals(1, billing.completed());
        assertEquals(1, billing.dead());
        assertEquals(0, billing.minute().getEpochSecond() % 60);
        assertThrows(IllegalArgumentException.class, () -> queue.throughput(Duration.ofDays(8)));
        assertThrows(IllegalArgumentException.class, () -> queue.countJobs(Duration.ZERO));
    }

    private static List<JobCount> sorted(List<JobCount> counts) {
        List<JobCount> out = new ArrayList<>(counts);
        out.sort((a, b) -> (a.queue() + a.state()).compareTo(b.queue() + b.state()));
        return out;
    }

    @Test
    void thePayloadIsTheStoredJson(FlexiQ queue) {
        String id = queue.enqueue(CAPTURE, new Invoice("inv-7", 700));
        assertEquals(Optional.of("{\"cents\":700,\"number\":\"inv-7\"}"), queue.getPayload(id));
        assertEquals(Optional.empty(), queue.getPayload("999999"));
    }
}
