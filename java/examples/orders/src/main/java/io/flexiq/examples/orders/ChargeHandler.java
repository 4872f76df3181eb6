package io.flexiq.examples.orders;

import io.flexiq.JobContext;
import io.flexiq.Task;
import io.flexiq.spring.FlexiQHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Charges placed orders: a handler bean, run by the worker the starter builds from every
 * {@link FlexiQHandler} bean. Delivery is at least once, so the job id goes to the payment
 * provider as its idempotency key: a job run again after a crash charges once. Its log lines
 * name the job (the worker puts it in the MDC; see logging.pattern.level).
 */
@Component
public class ChargeHandler implements FlexiQHandler<Charge> {
    private static final Logger LOG = LoggerFactory.getLogger(ChargeHandler.class);

    private final PaymentGateway payments;
    private final Orders orders;

    /** A handler charging through {@code payments} and marking {@code orders} charged. */
    public ChargeHandler(PaymentGateway payments, Orders orders) {
        this.payments = payments;
        this.orders = orders;
    }

    @Override
    public Task<Charge> task() {
        return Charge.TASK;
    }

    @Override
    public void handle(Charge charge, JobContext job) throws Exception {
        String reference = payments.charge(charge.orderId(), charge.amountCents(), "job-" + job.jobId());
        orders.markCharged(charge.orderId(), reference);
        LOG.info("charged order {}: {}", charge.orderId(), reference);
    }
}
