package io.flexiq.examples.orders;

import io.flexiq.IdempotencyConflictException;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders}: places an order; posting the same order again changes nothing. */
@RestController
public class OrderController {
    private final OrderService service;

    /** A controller placing orders through {@code service}. */
    public OrderController(OrderService service) {
        this.service = service;
    }

    /**
     * An order as posted.
     *
     * @param id the order's id, chosen by the client so that a retried request is the same order
     * @param amountCents the amount, in cents
     */
    public record OrderRequest(String id, long amountCents) {}

    /**
     * The placed order and its charge job.
     *
     * @param orderId the order's id
     * @param chargeJobId the id of the job charging it
     */
    public record OrderResponse(String orderId, String chargeJobId) {}

    /**
     * The answer to an order id posted again with another amount: 409, and nothing written.
     *
     * @param error what differs from the first request
     */
    public record Conflict(String error) {}

    /** Places the order and enqueues its charge. */
    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public OrderResponse place(@RequestBody OrderRequest request) {
        return new OrderResponse(request.id(), service.placeOrder(request.id(), request.amountCents()));
    }

    /** An order id reused for another order. */
    @ExceptionHandler(IdempotencyConflictException.class)
    @ResponseStatus(HttpStatus.CONFLICT)
    public Conflict conflict(IdempotencyConflictException e) {
        return new Conflict("order already placed with other details: " + e.getMessage());
    }
}
