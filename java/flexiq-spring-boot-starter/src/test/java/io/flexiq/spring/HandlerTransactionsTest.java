package io.flexiq.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flexiq.EnqueueOptions;
import io.flexiq.FlexiQ;
import io.flexiq.JobContext;
import io.flexiq.JobInfo;
import io.flexiq.JobState;
import io.flexiq.RetryPolicy;
import io.flexiq.Task;
import io.flexiq.test.FlexiQExtension;
import io.flexiq.test.FlexiQPostgresInitializer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A {@code @Transactional} handler bean's job completes in the handler's own transaction,
 * with no code in the handler: both commit, or neither.
 */
@ExtendWith(FlexiQExtension.class)
class HandlerTransactionsTest {
    record Order(long id, String plan) {}

    static final Task<Order> FULFIL = Task.of("fulfil", Order.class);
    static final EnqueueOptions RETRY_AT_ONCE = EnqueueOptions.builder()
            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(10))).maxAttempts(3).build();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new FlexiQPostgresInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
                    JacksonAutoConfiguration.class, FlexiQAutoConfiguration.class, FlexiQBoot4Configuration.class))
            .withUserConfiguration(Application.class);

    /** A handler that writes a row per attempt, then does what the order's plan says. */
    static class FulfilHandler implements FlexiQHandler<Order> {
        final JdbcTemplate jdbc;
        final FlexiQ client;
        /** How each attempt's transaction ended (TransactionSynchronization's STATUS_*), in order. */
        private final BlockingQueue<Integer> ended = new LinkedBlockingQueue<>();

        FulfilHandler(JdbcTemplate jdbc, FlexiQ client) {
            this.jdbc = jdbc;
            this.client = client;
        }

        @Override
        public Task<Order> task() {
            return FULFIL;
        }

        /** Through the proxy: its own fields are not the handler's. */
        public BlockingQueue<Integer> ended() {
            return ended;
        }

        @Override
        @Transactional
        public void handle(Order order, JobContext job) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    ended.add(status);
                }
            });
            jdbc.update("INSERT INTO " + client.schema() + ".shipments VALUES (?, ?)", order.id(), job.attempt());
            switch (order.plan()) {
                case "roll back first" -> {
                    if (job.attempt() == 1) {
                        // Rolled back, and the handler returns as if all went well.
                        TransactionAspectSupport.currentTransactionStatus().setRollbackOnly();
                    }
                }
                case "lose the job" -> {
                    // A later attempt takes the job meanwhile, as one would once this attempt's
                    // lease had passed; a connection of its own, outside this transaction.
                    otherConnection(jdbc, "UPDATE " + client.schema() + ".jobs SET attempt = attempt + 1 WHERE id = "
                            + job.jobId());
                }
                default -> { }
            }
        }
    }

    /** Runs a statement on a connection of its own, committed at once. */
    static void otherConnection(JdbcTemplate jdbc, String sql) {
        try (var c = jdbc.getDataSource().getConnection(); var s = c.createStatement()) {
            // The pool's connections are in auto-commit outside Spring's transactions.
            c.setAutoCommit(true);
            s.execute(sql);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Configuration(proxyBeanMethods = false)
    // Class-based proxies, as Spring Boot makes them.
    @EnableTransactionManagement(proxyTargetClass = true)
    static class Application {
        @Bean
        FulfilHandler fulfilHandler(JdbcTemplate jdbc, FlexiQ client) {
            jdbc.execute("CREATE TABLE " + client.schema() + ".shipments (order_id bigint, attempt int)");
            return new FulfilHandler(jdbc, client);
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    private static long shipments(JdbcTemplate jdbc, FlexiQ client, long order) {
        return jdbc.queryForObject("SELECT count(*) FROM " + client.schema() + ".shipments WHERE order_id = ?",
                Long.class, order);
    }

    @Test
    void theJobCompletesWithTheHandlersTransaction() {
        runner.run(context -> {
            assertNull(context.getStartupFailure());
            FlexiQ client = context.getBean(FlexiQ.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            String id = client.enqueue(FULFIL, new Order(1, "ship"), RETRY_AT_ONCE);
            await("the job to complete", () -> client.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            assertEquals(1, client.getJob(id).orElseThrow().attempt());
            assertEquals(1, shipments(jdbc, client, 1));
        });
    }

    @Test
    void aTransactionRolledBackLeavesTheJobUncompletedAndItRunsAgain() {
        runner.run(context -> {
            FlexiQ client = context.getBean(FlexiQ.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            String id = client.enqueue(FULFIL, new Order(2, "roll back first"), RETRY_AT_ONCE);
            await("the job to complete", () -> client.getJob(id).orElseThrow().state() == JobState.COMPLETED);
            JobInfo done = client.getJob(id).orElseThrow();
            assertEquals(2, done.attempt(), "the first attempt's transaction did not commit, nor did its completion");
            assertEquals(1, shipments(jdbc, client, 2));
        });
    }

    @Test
    void anAttemptThatLostItsJobRollsItsTransactionBack() {
        runner.run(context -> {
            FlexiQ client = context.getBean(FlexiQ.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            String id = client.enqueue(FULFIL, new Order(3, "lose the job"), RETRY_AT_ONCE);
            assertEquals(TransactionSynchronization.STATUS_ROLLED_BACK,
                    context.getBean(FulfilHandler.class).ended().poll(30, TimeUnit.SECONDS),
                    "the completion, refused at the commit, rolled the transaction back");
            JobInfo job = client.getJob(id).orElseThrow();
            assertEquals(2, job.attempt(), "the later attempt holds the job");
            assertEquals(JobState.RUNNING, job.state(), "the later attempt decides");
            assertEquals(0, shipments(jdbc, client, 3), "the lost attempt's write was rolled back");
        });
    }
}
