package io.flexiq.spring;

import io.flexiq.EnqueueOptions;
import io.flexiq.EnqueueRequest;
import io.flexiq.EnqueueResult;
import io.flexiq.FlexiQ;
import io.flexiq.JobQueue;
import io.flexiq.Task;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link JobQueue} bean: while a Spring-managed transaction is active, enqueues on that
 * transaction's connection of the application's {@link DataSource} (where a {@code JdbcTemplate}
 * on it would write), so that the job exists only if the transaction commits, and workers are
 * woken at the commit; otherwise enqueues through the client's own pool. Dedup is the same
 * either way: a repeat of a keyed enqueue gets the job holding the key.
 */
public final class TransactionalJobQueue implements JobQueue {
    private final FlexiQ client;
    private final DataSource dataSource;

    /**
     * A queue enqueuing through {@code client}, on {@code dataSource}'s transactional connection
     * when a transaction is active; {@code dataSource} null: always through the client's pool.
     */
    public TransactionalJobQueue(FlexiQ client, DataSource dataSource) {
        this.client = Objects.requireNonNull(client, "client");
        this.dataSource = dataSource;
    }

    @Override
    public <T> EnqueueResult enqueueWithResult(Task<T> task, T payload, EnqueueOptions options) {
        return inTransaction(c -> client.enqueueWithResult(c, task, payload, options),
                () -> client.enqueueWithResult(task, payload, options));
    }

    @Override
    public <T> List<String> enqueueMany(Task<T> task, List<? extends T> payloads, EnqueueOptions options) {
        return inTransaction(c -> client.enqueueMany(c, task, payloads, options),
                () -> client.enqueueMany(task, payloads, options));
    }

    @Override
    public List<EnqueueResult> enqueueManyWithResults(List<? extends EnqueueRequest<?>> requests) {
        return inTransaction(c -> client.enqueueManyWithResults(c, requests),
                () -> client.enqueueManyWithResults(requests));
    }

    /** The client this queue enqueues through. */
    public FlexiQ client() {
        return client;
    }

    private <R> R inTransaction(Function<Connection, R> onConnection, Supplier<R> onPool) {
        if (dataSource == null || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return onPool.get();
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return onConnection.apply(connection);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
