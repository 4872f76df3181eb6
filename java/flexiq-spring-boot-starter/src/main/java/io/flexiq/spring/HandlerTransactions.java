package io.flexiq.spring;

import io.flexiq.JobContext;
import io.flexiq.JobHandler;
import java.lang.reflect.Method;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.annotation.AnnotationTransactionAttributeSource;
import org.springframework.transaction.interceptor.TransactionAttributeSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Completes the job of a {@link FlexiQHandler} whose {@code handle} method is
 * {@code @Transactional} inside that method's own transaction, with no code in the handler: the
 * job is completed at the transaction's commit ({@link JobContext#completeIn}, on the
 * transaction's connection of the application's {@link DataSource}), so the handler's writes and
 * the completion commit together, or neither does. When the attempt no longer holds its job, the
 * completion throws {@link io.flexiq.JobLeaseLostException} before the commit, and Spring rolls
 * the transaction back.
 *
 * <p>Added as a listener to every {@link ConfigurableTransactionManager} bean, it binds the
 * completion to the first transaction that begins on a handler's thread while such a handler
 * runs: the one its {@code @Transactional} proxy begins. Transactions begun later in the same
 * handler ({@code REQUIRES_NEW}) are left alone.
 */
final class HandlerTransactions implements TransactionExecutionListener, BeanPostProcessor {
    /** The attempt of the transactional handler running on this thread, until its transaction begins. */
    private static final ThreadLocal<JobContext> UNBOUND = new ThreadLocal<>();
    private static final Method HANDLE;

    static {
        try {
            HANDLE = JobHandler.class.getMethod("handle", Object.class, JobContext.class);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ObjectProvider<DataSource> dataSource;
    private final TransactionAttributeSource attributes = new AnnotationTransactionAttributeSource();

    /** Completes jobs on the transactional connection of {@code dataSource}, looked up when first needed. */
    HandlerTransactions(ObjectProvider<DataSource> dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * {@code handler} as the worker runs it: if its {@code handle} method (or class) is
     * {@code @Transactional}, its job completes in that transaction; otherwise it is returned
     * as it is.
     */
    <T> JobHandler<T> bind(FlexiQHandler<T> handler) {
        if (attributes.getTransactionAttribute(HANDLE, AopUtils.getTargetClass(handler)) == null) {
            return handler;
        }
        return (payload, job) -> {
            UNBOUND.set(job);
            try {
                handler.handle(payload, job);
            } finally {
                UNBOUND.remove();
            }
        };
    }

    @Override
    public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
        JobContext job = UNBOUND.get();
        if (job == null || beginFailure != null || !TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        UNBOUND.remove();
        // From here the job completes only if this transaction commits; one rolled back before
        // the commit's completion leaves the attempt failed, not completed as the handler returns.
        job.completesInTransaction();
        DataSource source = dataSource.getIfUnique();
        if (source == null) {
            throw new IllegalStateException("the @Transactional handler of job " + job.jobId() + " (task " + job.task()
                    + ") cannot complete its job in its transaction: the application has no single DataSource bean;"
                    + " call job.completeIn(connection) in the handler, on the transaction's connection");
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void beforeCommit(boolean readOnly) {
                Connection connection = DataSourceUtils.getConnection(source);
                try {
                    job.completeIn(connection);
                } finally {
                    DataSourceUtils.releaseConnection(connection, source);
                }
            }
        });
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof ConfigurableTransactionManager manager) {
            manager.addListener(this);
        }
        return bean;
    }
}
