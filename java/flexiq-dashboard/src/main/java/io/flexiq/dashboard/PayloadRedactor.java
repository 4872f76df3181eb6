package io.flexiq.dashboard;

import io.flexiq.JobInfo;

/**
 * What the job page shows of a payload. Payloads are the application's data: mask what operators
 * must not read (card numbers, personal data) here. Without one, the page shows payloads stored
 * in clear and hides those a payload codec encrypted ({@link #showUnencrypted()}).
 */
@FunctionalInterface
public interface PayloadRedactor {
    /**
     * The text to show for this job's payload, escaped by the dashboard.
     *
     * @param job the job, for redacting by task or queue
     * @param payloadJson the payload's JSON (decoded, if a payload codec encoded it); null when
     *     {@link #reads(JobInfo)} said the page need not read it
     */
    String redact(JobInfo job, String payloadJson);

    /**
     * Whether the page reads, and decodes, this job's payload before {@link #redact} shows it.
     * A redactor that hides some payloads whatever they hold says false for them, so that the
     * dashboard neither fetches nor decrypts what it will not show. True unless overridden.
     */
    default boolean reads(JobInfo job) {
        return true;
    }

    /** Shows every payload, those a payload codec encrypted decoded. */
    static PayloadRedactor showAll() {
        return (job, payloadJson) -> payloadJson;
    }

    /**
     * Shows payloads stored in clear and hides those a payload codec encoded (encrypted, say):
     * what the application encrypts, operators see only where it says so. The default.
     */
    static PayloadRedactor showUnencrypted() {
        return new PayloadRedactor() {
            @Override
            public String redact(JobInfo job, String payloadJson) {
                return job.payloadCodec()
                        .map(codec -> "(encoded by payload codec " + codec + ": not shown; the application may show"
                                + " it with another PayloadRedactor)")
                        .orElse(payloadJson);
            }

            @Override
            public boolean reads(JobInfo job) {
                return job.payloadCodec().isEmpty();
            }
        };
    }

    /** Shows no payload at all. */
    static PayloadRedactor hideAll() {
        return new PayloadRedactor() {
            @Override
            public String redact(JobInfo job, String payloadJson) {
                return "(hidden)";
            }

            @Override
            public boolean reads(JobInfo job) {
                return false;
            }
        };
    }
}
