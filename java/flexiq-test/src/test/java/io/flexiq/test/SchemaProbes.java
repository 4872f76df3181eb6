package io.flexiq.test;

import io.flexiq.FlexiQ;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Test classes that {@link ExtensionLifecycleTest} runs through a JUnit engine of its own, to
 * look at what the extension did before, during and after them. Their names keep them out of a
 * normal test run.
 */
final class SchemaProbes {
    /** Every client the probes received, in order. */
    static final List<FlexiQ> SEEN = new CopyOnWriteArrayList<>();
    /** Runs inside each probe's test, while its class's schema exists. */
    static volatile Inspector inspector = queue -> {};

    private SchemaProbes() {}

    /** A check made from inside a probe. */
    interface Inspector {
        /** Checks {@code queue}; throwing fails the probe. */
        void inspect(FlexiQ queue) throws Exception;
    }

    static void probe(FlexiQ queue) throws Exception {
        SEEN.add(queue);
        inspector.inspect(queue);
    }

    @FlexiQTest
    static class First {
        @Test
        void probe(FlexiQ queue) throws Exception {
            SchemaProbes.probe(queue);
        }
    }

    @FlexiQTest
    static class Second {
        @Test
        void probe(FlexiQ queue) throws Exception {
            SchemaProbes.probe(queue);
        }
    }

    @FlexiQTest
    static class WantsServer {
        @Test
        void probe(PostgresServer server) {
            throw new AssertionError("got " + server);
        }
    }
}
