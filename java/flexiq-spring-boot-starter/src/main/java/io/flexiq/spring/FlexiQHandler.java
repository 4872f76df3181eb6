package io.flexiq.spring;

import io.flexiq.JobHandler;
import io.flexiq.Task;

/**
 * A handler as a Spring bean: names its {@link Task} and runs its jobs. The auto-configuration
 * collects every such bean into one worker that starts with the application context (see
 * {@link FlexiQWorkerLifecycle}); one bean per task.
 *
 * <pre>{@code
 * @Component
 * class ChargeHandler implements FlexiQHandler<Charge> {
 *     public Task<Charge> task() { return Tasks.CHARGE; }
 *     public void handle(Charge charge, JobContext job) { payments.charge(charge, job.jobId()); }
 * }
 * }</pre>
 *
 * @param <T> the task's payload type
 */
public interface FlexiQHandler<T> extends JobHandler<T> {
    /** The task whose jobs this bean runs. */
    Task<T> task();
}
