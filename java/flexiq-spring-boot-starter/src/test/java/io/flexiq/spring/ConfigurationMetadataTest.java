package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.InputStream;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The jar describes every flexiq.* property, with its default, for IDEs to complete. */
class ConfigurationMetadataTest {
    @Test
    void everyPropertyIsDescribedWithItsDefault() throws Exception {
        JsonNode metadata;
        try (InputStream in = FlexiQProperties.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertNotNull(in, "the configuration processor wrote no metadata");
            metadata = JsonMapper.builder().build().readTree(in);
        }
        Map<String, String> defaults = new TreeMap<>();
        for (JsonNode property : metadata.get("properties")) {
            assertFalse(property.path("description").asString("").isEmpty(), property.toString());
            JsonNode value = property.get("defaultValue");
            defaults.put(property.get("name").asString(), value == null ? null : value.toString());
        }
        Map<String, String> expected = new TreeMap<>();
        expected.put("flexiq.enabled", "true");
        expected.put("flexiq.url", null);
        expected.put("flexiq.direct-url", null);
        expected.put("flexiq.schema", "\"flexiq\"");
        expected.put("flexiq.pool-size", "10");
        expected.put("flexiq.connect-timeout", "\"5s\"");
        expected.put("flexiq.acquire-timeout", "\"30s\"");
        expected.put("flexiq.migrate", "true");
        expected.put("flexiq.key-retention", null);
        expected.put("flexiq.join-transactions", "true");
        expected.put("flexiq.paused-queues", null);
        expected.put("flexiq.metrics.refresh", "\"30s\"");
        expected.put("flexiq.maintenance.enabled", "true");
        expected.put("flexiq.maintenance.interval", "\"5s\"");
        expected.put("flexiq.maintenance.completed-retention", "\"24h\"");
        expected.put("flexiq.maintenance.cancelled-retention", "\"24h\"");
        expected.put("flexiq.maintenance.dead-retention", "\"7d\"");
        expected.put("flexiq.maintenance.batch-size", "1000");
        expected.put("flexiq.encryption.keys", null);
        expected.put("flexiq.encryption.encrypt-with", null);
        expected.put("flexiq.encryption.fingerprint-key", null);
        expected.put("flexiq.dashboard.enabled", "true");
        expected.put("flexiq.dashboard.path", "\"/flexiq\"");
        expected.put("flexiq.tracing.enabled", "true");
        expected.put("flexiq.worker.enabled", "true");
        expected.put("flexiq.worker.queues", "\"default\"");
        expected.put("flexiq.worker.concurrency", "10");
        expected.put("flexiq.worker.lease", "\"30s\"");
        expected.put("flexiq.worker.poll-interval", "\"1s\"");
        expected.put("flexiq.worker.shutdown-timeout", "\"10s\"");
        assertEquals(expected, defaults);
    }
}
