package io.flexiq.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The codes by which enums cross JNI are the same on both sides, whatever order either declares. */
class CodesTest {
    private static final List<Codes.Table<?>> TABLES = List.of(Codes.JOB_STATE, Codes.ENQUEUE_OUTCOME,
            Codes.REDRIVE_OUTCOME);

    /** Java constants the core does not report yet, and so has no code for. */
    private static final Map<String, Set<String>> NOT_FROM_THE_CORE = Map.of(
            "EnqueueOutcome", Set.of("REPLACED", "NON_REPLACEABLE", "COALESCED"));

    @Test
    void everyEnumConstantHasACode() {
        for (Codes.Table<?> table : TABLES) {
            assertEquals(table.type().getEnumConstants().length, table.byName().size(), table.name());
        }
    }

    @Test
    void theNativeTablesMatchTheJavaTables() {
        Map<String, Map<String, Integer>> reported = NativeBridge.describe().codes();
        Set<String> names = new TreeSet<>();
        for (Codes.Table<?> table : TABLES) {
            names.add(table.name());
            Map<String, Integer> expected = new LinkedHashMap<>(table.byName());
            expected.keySet().removeAll(NOT_FROM_THE_CORE.getOrDefault(table.name(), Set.of()));
            assertEquals(expected, reported.get(table.name()), table.name());
        }
        assertEquals(names, new TreeSet<>(reported.keySet()));
    }
}
