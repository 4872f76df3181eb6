package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.internal.NativeBridge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** The shared cron schedule vectors in tests/vectors/schedule_ticks.json, through the real native library. */
class ScheduleVectorsTest {
    @Test
    void ticksAndKeysMatchTheVectors() throws Exception {
        Path file = Paths.get(System.getProperty("flexiq.vectors", "tests/vectors/auto_keys.json"))
                .resolveSibling("schedule_ticks.json");
        JsonNode vectors = new ObjectMapper().readTree(Files.readAllBytes(file)).get("vectors");
        assertTrue(vectors.size() >= 8, "expected at least 8 vectors, found " + vectors.size());
        List<String> failures = new ArrayList<>();
        for (JsonNode v : vectors) {
            String name = v.get("name").asText();
            Instant at = Instant.parse(v.get("at").asText());
            NativeBridge.CronTicks ticks;
            try {
                ticks = NativeBridge.cronTicks(v.get("cron").asText(), v.get("zone").asText(), at);
            } catch (IllegalArgumentException e) {
                // A vector without a next tick is an expression every binding refuses.
                if (!v.get("next").isNull() || !e.getMessage().contains("has no tick after")) {
                    failures.add(name + ": " + e.getMessage());
                }
                continue;
            }
            String latest = ticks.latest() == null ? null : ticks.latest().toString();
            if (!Objects.equals(text(v, "latest"), latest)) {
                failures.add(name + ": latest was " + latest);
            }
            if (!Objects.equals(text(v, "next"), ticks.next().toString())) {
                failures.add(name + ": next was " + ticks.next());
            }
            String key = ticks.latest() == null ? null : NativeBridge.tickKey(v.get("schedule").asText(), ticks.latest());
            if (!Objects.equals(text(v, "key"), key)) {
                failures.add(name + ": key was " + key);
            }
        }
        assertEquals(List.of(), failures);
    }

    private static String text(JsonNode v, String field) {
        return v.get(field).isNull() ? null : v.get(field).asText();
    }
}
