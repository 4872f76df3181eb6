package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Schedules as any client sees them: listed with their ticks and the last tick's job, paused and
 * resumed for every declaring process, and triggered now under a tick's key rules.
 */
class DeclaredSchedulesTest {
    static final Task<ScheduleTest.Beat> TICK = ScheduleTest.TICK;

    private static String ticks(String schema) {
        return "SELECT count(*) FROM " + schema + ".jobs WHERE key_scope = 'flexiq.schedule'";
    }

    @Test
    void aDeclaredScheduleIsListedWithItsTicksAndAPauseStopsItsTicksInTheProcessDeclaringIt() throws Exception {
        try (FlexiQ declaring = TestDatabase.client();
                FlexiQ operator = FlexiQ.builder(TestDatabase.url()).schema(declaring.schema()).build()) {
            String schema = declaring.schema();
            declaring.schedule(Schedule.builder("every-second", "* * * * * *", TICK, new ScheduleTest.Beat("b"))
                    .zone(ZoneId.of("Europe/Berlin")).options(EnqueueOptions.builder().queue("beats").build()).build());
            WorkerTest.await("the schedule to be declared and to tick", () -> !operator.schedules().isEmpty()
                    && operator.schedules().get(0).lastTickJobId().isPresent());
            DeclaredSchedule listed = operator.schedules().get(0);
            assertEquals("every-second", listed.name());
            assertEquals("* * * * * *", listed.cron());
            assertEquals(ZoneId.of("Europe/Berlin"), listed.zone());
            assertEquals(TICK.name(), listed.task());
            assertEquals("beats", listed.queue());
            assertTrue(listed.triggerable());
            assertTrue(listed.nextTick().isAfter(listed.lastTick().orElseThrow()));
            assertEquals(Optional.empty(), listed.pausedAt());
            assertEquals("beats", operator.getJob(listed.lastTickJobId().get()).orElseThrow().queue());

            assertTrue(operator.pauseSchedule("every-second"));
            assertFalse(operator.pauseSchedule("every-second"), "paused already");
            // A tick under way when the pause came may still land: wait past it, then count.
            Thread.sleep(1_500);
            long atPause = WorkerTest.scalar(ticks(schema));
            Thread.sleep(2_500);
            assertEquals(atPause, WorkerTest.scalar(ticks(schema)), "no tick while paused");
            assertTrue(operator.schedules().get(0).pausedAt().isPresent());

            assertTrue(operator.resumeSchedule("every-second"));
            WorkerTest.await("a tick after the resume", () -> WorkerTest.scalar(ticks(schema)) > atPause);
            assertFalse(operator.resumeSchedule("every-second"), "not paused");
        }
    }

    @Test
    void aTriggerEnqueuesTheDeclaredJobOncePerInstantFromAnotherClient() throws Exception {
        try (FlexiQ declaring = TestDatabase.client();
                FlexiQ operator = FlexiQ.builder(TestDatabase.url()).schema(declaring.schema()).build()) {
            // Once a year: no tick of its own during the test.
            declaring.schedule(Schedule.builder("yearly", "0 0 1 1 *", TICK, new ScheduleTest.Beat("new year"))
                    .options(EnqueueOptions.builder().queue("rare").priority(7).maxAttempts(2).build()).build());
            WorkerTest.await("the schedule to be declared", () -> !operator.schedules().isEmpty());
            Instant at = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            EnqueueResult first = operator.triggerSchedule("yearly", at);
            EnqueueResult again = operator.triggerSchedule("yearly", at);
            assertEquals(EnqueueOutcome.ACCEPTED, first.outcome());
            assertEquals(EnqueueOutcome.REPLAYED, again.outcome(), "a double submit");
            assertEquals(first.jobId(), again.jobId());
            JobInfo job = operator.getJob(first.jobId()).orElseThrow();
            assertEquals("rare", job.queue());
            assertEquals(7, job.priority());
            assertEquals(2, job.maxAttempts());
            assertEquals(Optional.of("{\"note\":\"new year\"}"), operator.getPayload(first.jobId()));
            assertEquals(EnqueueOutcome.ACCEPTED, operator.triggerSchedule("yearly", at.plusSeconds(1)).outcome());

            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> operator.triggerSchedule("nobody", at));
            assertTrue(none.getMessage().contains("no schedule named nobody"), none.getMessage());
        }
    }

    @Test
    void aScheduleWithFlowControlOrOfAnEncryptingClientIsListedButNotTriggerable() throws Exception {
        try (FlexiQ declaring = TestDatabase.client()) {
            declaring.schedule(Schedule.builder("limited", "0 0 1 1 *", TICK, new ScheduleTest.Beat("x"))
                    .options(EnqueueOptions.builder().concurrencyKey("k", 1).build()).build());
            WorkerTest.await("the schedule to be declared", () -> !declaring.schedules().isEmpty());
            assertFalse(declaring.schedules().get(0).triggerable());
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> declaring.triggerSchedule("limited", Instant.now()));
            assertTrue(refused.getMessage().contains("cannot be triggered"), refused.getMessage());
        }
    }
}
