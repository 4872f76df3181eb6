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
            Codes.NON_REPLACEABLE_REASON, Codes.REDRIVE_OUTCOME);

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
            assertEquals(new LinkedHashMap<>(table.byName()), reported.get(table.name()), table.name());
        }
        assertEquals(names, new TreeSet<>(reported.keySet()));
    }
}
