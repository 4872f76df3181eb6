package io.flexiq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flexiq.internal.NativeBridge;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The shared vectors in tests/vectors, through the real native library. */
class VectorsTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    static List<JsonNode> vectors() throws Exception {
        Path file = Paths.get(System.getProperty("flexiq.vectors", "tests/vectors/auto_keys.json"));
        List<JsonNode> out = new ArrayList<>();
        MAPPER.readTree(Files.readAllBytes(file)).get("vectors").forEach(out::add);
        return out;
    }

    @Test
    void everyVectorCanonicalizesAndHashesAsRecorded() throws Exception {
        List<JsonNode> vectors = vectors();
        assertTrue(vectors.size() >= 30, "expected at least 30 vectors, found " + vectors.size());
        List<String> failures = new ArrayList<>();
        for (JsonNode v : vectors) {
            String name = v.get("name").asText();
            byte[] payload = v.get("payload").asText().getBytes(StandardCharsets.UTF_8);
            byte[] canonical = v.get("canonical").asText().getBytes(StandardCharsets.UTF_8);
            byte[] actual = NativeBridge.canonicalJson(payload);
            if (!java.util.Arrays.equals(canonical, actual)) {
                failures.add(name + ": canonical was " + new String(actual, StandardCharsets.UTF_8));
            }
            String key = DedupKeys.autoKey(v.get("task").asText(), canonical);
            if (!key.equals(v.get("key").asText())) {
                failures.add(name + ": key was " + key);
            }
        }
        assertEquals(List.of(), failures);
    }

    /** Every payload in the file's invalid list is refused, and the refusal names its JSON path. */
    @Test
    void everyInvalidVectorIsRefusedNamingItsPath() throws Exception {
        Path file = Paths.get(System.getProperty("flexiq.vectors", "tests/vectors/auto_keys.json"));
        JsonNode invalid = MAPPER.readTree(Files.readAllBytes(file)).get("invalid");
        assertTrue(invalid.size() >= 10, "expected at least 10 invalid vectors, found " + invalid.size());
        List<String> failures = new ArrayList<>();
        for (JsonNode v : invalid) {
            String name = v.get("name").asText();
            String path = v.get("path").asText();
            try {
                byte[] canonical = NativeBridge.canonicalJson(v.get("payload").asText().getBytes(StandardCharsets.UTF_8));
                failures.add(name + ": accepted as " + new String(canonical, StandardCharsets.UTF_8));
            } catch (PayloadSerializationException e) {
                if (!Pattern.compile(" at " + Pattern.quote(path) + "(?![.\\[])").matcher(e.getMessage()).find()) {
                    failures.add(name + ": refused without naming " + path + ": " + e.getMessage());
                }
            }
        }
        assertEquals(List.of(), failures);
    }

    @Test
    void defaultSerializerEmitsTheCanonicalBytesForTheParsedValue() throws Exception {
        CanonicalJsonSerializer serializer = new CanonicalJsonSerializer();
        for (JsonNode v : vectors()) {
            JsonNode value = MAPPER.readTree(v.get("payload").asText());
            if (v.get("name").asText().equals("float_min_subnormal")) {
                // Java writes Double.MIN_VALUE as 4.9E-324, a digit more than the double holds
                // (JavaScript writes 5e-324): refused, as CanonicalJsonSerializer documents.
                PayloadSerializationException e = assertThrows(PayloadSerializationException.class,
                        () -> serializer.serialize(value));
                assertTrue(e.getMessage().contains("the number 4.9E-324 at $ is not exactly"), e.getMessage());
                continue;
            }
            byte[] canonical = v.get("canonical").asText().getBytes(StandardCharsets.UTF_8);
            assertArrayEquals(canonical, serializer.serialize(value), v.get("name").asText());
        }
    }
}
