package io.flexiq.dashboard;

import io.flexiq.JobInfo;

/**
 * What the job page shows of a payload. Payloads are the application's data: mask what operators
 * must not read (card numbers, personal data) here. Without one, the page shows the stored JSON.
 */
@FunctionalInterface
public interface PayloadRedactor {
    /**
     * The text to show for this job's payload, escaped by the dashboard.
     *
     * @param job the job, for redacting by task or queue
     * @param payloadJson the payload as stored, JSON
     */
    String redact(JobInfo job, String payloadJson);

    /** Shows payloads as stored. */
    static PayloadRedactor showAll() {
        return (job, payloadJson) -> payloadJson;
    }

    /** Shows no payload at all. */
    static PayloadRedactor hideAll() {
        return (job, payloadJson) -> "(hidden)";
    }
}
