package io.flexiq.test;

import io.flexiq.FlexiQ;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Test classes that {@link ExtensionLifecycleTest} runs through a JUnit engine of its own, to
 * look at what the extension did before, during and after them. Any other run skips them.
 */
final class SchemaProbes {
    /** The configuration parameter that enables the probes. */
    static final String PROBING = "flexiq.test.probing";
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

    /** Disables the probes unless {@link #PROBING} is set. */
    static final class OnlyWhenProbing implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getConfigurationParameter(PROBING).isPresent()
                    ? ConditionEvaluationResult.enabled("probing")
                    : ConditionEvaluationResult.disabled("run by ExtensionLifecycleTest only");
        }
    }

    static void probe(FlexiQ queue) throws Exception {
        SEEN.add(queue);
        inspector.inspect(queue);
    }

    @FlexiQTest
    @ExtendWith(OnlyWhenProbing.class)
    static class First {
        @Test
        void probe(FlexiQ queue) throws Exception {
            SchemaProbes.probe(queue);
        }
    }

    @FlexiQTest
    @ExtendWith(OnlyWhenProbing.class)
    static class Second {
        @Test
        void probe(FlexiQ queue) throws Exception {
            SchemaProbes.probe(queue);
        }
    }

    @FlexiQTest
    @ExtendWith(OnlyWhenProbing.class)
    static class WantsServer {
        @Test
        void probe(PostgresServer server) {
            throw new AssertionError("got " + server);
        }
    }
}
