package io.flexiq.internal;

import io.flexiq.EnqueueOutcome;
import io.flexiq.JobState;
import io.flexiq.NonReplaceableReason;
import io.flexiq.RedriveOutcome;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The numbers by which states and outcomes cross the native boundary, each given explicitly
 * (never an ordinal); their Rust twin is {@code flexiq-jni/src/codes.rs}. A test compares these
 * tables with the ones the native library reports ({@link NativeBridge#describe}).
 */
public final class Codes {
    private Codes() {}

    /** {@link JobState} by code. */
    public static final Table<JobState> JOB_STATE = new Table<>("JobState", JobState.class)
            .code(1, JobState.AVAILABLE)
            .code(2, JobState.SCHEDULED)
            .code(3, JobState.RETRYABLE)
            .code(4, JobState.RUNNING)
            .code(5, JobState.COMPLETED)
            .code(6, JobState.DEAD)
            .code(7, JobState.CANCELLED);

    /** {@link EnqueueOutcome} by code. */
    public static final Table<EnqueueOutcome> ENQUEUE_OUTCOME = new Table<>("EnqueueOutcome", EnqueueOutcome.class)
            .code(1, EnqueueOutcome.ACCEPTED)
            .code(2, EnqueueOutcome.REPLAYED)
            .code(3, EnqueueOutcome.REPLACED)
            .code(4, EnqueueOutcome.NON_REPLACEABLE)
            .code(5, EnqueueOutcome.COALESCED);

    /** {@link NonReplaceableReason} by code; 0 on the wire means no reason. */
    public static final Table<NonReplaceableReason> NON_REPLACEABLE_REASON = new Table<>("NonReplaceableReason",
            NonReplaceableReason.class)
            .code(1, NonReplaceableReason.INCOMPATIBLE_MODE)
            .code(2, NonReplaceableReason.NOT_PENDING)
            .code(3, NonReplaceableReason.WINDOW_ELAPSED);

    /** {@link RedriveOutcome} by code. */
    public static final Table<RedriveOutcome> REDRIVE_OUTCOME = new Table<>("RedriveOutcome", RedriveOutcome.class)
            .code(1, RedriveOutcome.REDRIVEN)
            .code(2, RedriveOutcome.REPLAYED)
            .code(3, RedriveOutcome.KEY_HELD)
            .code(4, RedriveOutcome.NOT_DEAD)
            .code(5, RedriveOutcome.NOT_FOUND);

    /**
     * The codes of one enum.
     *
     * @param <E> the enum
     */
    public static final class Table<E extends Enum<E>> {
        private final String name;
        private final Class<E> type;
        private final Map<Integer, E> byCode = new HashMap<>();
        private final Map<E, Integer> byConstant;

        private Table(String name, Class<E> type) {
            this.name = name;
            this.type = type;
            this.byConstant = new EnumMap<>(type);
        }

        private Table<E> code(int code, E constant) {
            if (byCode.put(code, constant) != null || byConstant.put(constant, code) != null) {
                throw new IllegalStateException(name + " gives code " + code + " or " + constant + " twice");
            }
            return this;
        }

        /** The name the native library gives this table. */
        public String name() {
            return name;
        }

        /** The enum. */
        public Class<E> type() {
            return type;
        }

        /** The constant of a code the native library sent. */
        public E of(int code) {
            E constant = byCode.get(code);
            if (constant == null) {
                throw new IllegalStateException("the native library sent " + name + " code " + code
                        + ", which this jar does not know; the jar and the library must come from one build");
            }
            return constant;
        }

        /** The code of a constant, as the native library takes it. */
        public int codeOf(E constant) {
            return byConstant.get(constant);
        }

        /** Constant name to code, in declaration order. */
        public Map<String, Integer> byName() {
            Map<String, Integer> out = new LinkedHashMap<>();
            byConstant.forEach((constant, code) -> out.put(constant.name(), code));
            return Collections.unmodifiableMap(out);
        }
    }
}
