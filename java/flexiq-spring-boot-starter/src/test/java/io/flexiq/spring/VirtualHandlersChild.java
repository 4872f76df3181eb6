package io.flexiq.spring;

import io.flexiq.JobContext;
import io.flexiq.JobQueue;
import io.flexiq.Task;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Run by {@link VirtualHandlersTest} on Java 21 or later: a context with
 * {@code spring.threads.virtual.enabled=true} runs a handler bean and prints its thread.
 * Arguments: the database URL and a fresh schema.
 */
public final class VirtualHandlersChild {
    private VirtualHandlersChild() {}

    /** A payload. */
    public record Ping(int n) {}

    static final Task<Ping> PING = Task.of("ping", Ping.class);
    static final BlockingQueue<Thread> THREADS = new ArrayBlockingQueue<>(1);

    /** The handler bean. */
    @Configuration(proxyBeanMethods = false)
    static class Handler {
        @Bean
        FlexiQHandler<Ping> ping() {
            return new FlexiQHandler<>() {
                @Override
                public Task<Ping> task() {
                    return PING;
                }

                @Override
                public void handle(Ping ping, JobContext job) {
                    THREADS.add(Thread.currentThread());
                }
            };
        }
    }

    /** Prints the handler's thread and whether it is virtual. */
    public static void main(String[] args) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(FlexiQAutoConfiguration.class))
                .withUserConfiguration(Handler.class)
                .withPropertyValues("flexiq.url=" + args[0], "flexiq.schema=" + args[1],
                        "spring.threads.virtual.enabled=" + args[2])
                .run(context -> {
                    context.getBean(JobQueue.class).enqueue(PING, new Ping(1));
                    Thread thread = THREADS.poll(60, TimeUnit.SECONDS);
                    // Through reflection: the tests compile for Java 17, which has no virtual threads.
                    Object virtual = thread == null ? null : Thread.class.getMethod("isVirtual").invoke(thread);
                    System.out.println("handler thread: " + (thread == null ? "none" : thread.getName())
                            + "; virtual: " + virtual);
                });
    }
}
