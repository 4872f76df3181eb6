//! The numbers by which states and outcomes cross to Java, each given explicitly; their Java
//! twin is `io.flexiq.internal.Codes`. `nativeDescribe` hands these tables (and the list of
//! natives) to Java, where a test compares them with the Java enums, so the two cannot drift.

use flexiq_core::request::fields;
use flexiq_core::{NonReplaceable, Outcome, Redrive};
use flexiq_jni_shell::errors::{BridgeError, BridgeResult};
use flexiq_jni_shell::native::SIGNATURE;
use flexiq_jni_shell::wire::{Reader, Writer};

/// `io.flexiq.JobState`, by the name PostgreSQL stores (the Java constant in upper case).
const JOB_STATES: &[(&str, i32)] = &[
    ("AVAILABLE", 1),
    ("SCHEDULED", 2),
    ("RETRYABLE", 3),
    ("RUNNING", 4),
    ("COMPLETED", 5),
    ("DEAD", 6),
    ("CANCELLED", 7),
];

/// `io.flexiq.EnqueueOutcome`.
const ENQUEUE_OUTCOMES: &[(&str, i32)] = &[
    ("ACCEPTED", 1),
    ("REPLAYED", 2),
    ("REPLACED", 3),
    ("NON_REPLACEABLE", 4),
    ("COALESCED", 5),
];

/// `io.flexiq.NonReplaceableReason`; 0 is "no reason" on the wire.
const NON_REPLACEABLE_REASONS: &[(&str, i32)] = &[
    ("INCOMPATIBLE_MODE", 1),
    ("NOT_PENDING", 2),
    ("WINDOW_ELAPSED", 3),
];

/// `io.flexiq.RedriveOutcome`.
const REDRIVE_OUTCOMES: &[(&str, i32)] = &[
    ("REDRIVEN", 1),
    ("REPLAYED", 2),
    ("KEY_HELD", 3),
    ("NOT_DEAD", 4),
    ("NOT_FOUND", 5),
];

fn code(table: &[(&str, i32)], name: &str) -> BridgeResult<i32> {
    table
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, c)| c)
        .ok_or_else(|| BridgeError::BadArgument(format!("no code for {name}")))
}

/// The code of a job state as PostgreSQL stores it (`available`, …).
pub(crate) fn job_state(stored: &str) -> BridgeResult<i32> {
    code(JOB_STATES, stored)
}

/// The job state of a code, as PostgreSQL stores it (`available`, …).
pub(crate) fn job_state_named(code: i32) -> BridgeResult<String> {
    JOB_STATES
        .iter()
        .find(|&&(_, c)| c == code)
        .map(|(name, _)| name.to_ascii_lowercase())
        .ok_or_else(|| BridgeError::BadArgument(format!("no job state has code {code}")))
}

/// The codes of an outcome and of its reason (0 when it has none).
pub(crate) fn enqueue_outcome(outcome: Outcome) -> BridgeResult<(i32, i32)> {
    let (name, reason) = match outcome {
        Outcome::Accepted => ("ACCEPTED", None),
        Outcome::Replayed => ("REPLAYED", None),
        Outcome::Replaced => ("REPLACED", None),
        Outcome::Coalesced => ("COALESCED", None),
        Outcome::NonReplaceable(why) => (
            "NON_REPLACEABLE",
            Some(match why {
                NonReplaceable::IncompatibleMode => "INCOMPATIBLE_MODE",
                NonReplaceable::NotPending => "NOT_PENDING",
                NonReplaceable::WindowElapsed => "WINDOW_ELAPSED",
            }),
        ),
    };
    let reason = match reason {
        Some(r) => code(NON_REPLACEABLE_REASONS, r)?,
        None => 0,
    };
    Ok((code(ENQUEUE_OUTCOMES, name)?, reason))
}

pub(crate) fn redrive_outcome(redrive: &Redrive) -> BridgeResult<i32> {
    code(
        REDRIVE_OUTCOMES,
        match redrive {
            Redrive::Redriven => "REDRIVEN",
            Redrive::Replayed => "REPLAYED",
            Redrive::KeyHeld { .. } => "KEY_HELD",
            Redrive::NotDead { .. } => "NOT_DEAD",
            Redrive::NotFound => "NOT_FOUND",
        },
    )
}

/// `nativeDescribe(0, ∅)` → list of tables (text name, list of (text constant, i32 code)),
/// then list of natives (text name, text signature), then the fields of an enqueue entry as
/// `nativeEnqueue` reads them (text name, text wire kind), in order.
pub(crate) fn describe(_: &mut Reader<'_>, w: &mut Writer) -> BridgeResult<()> {
    let tables = [
        ("JobState", JOB_STATES),
        ("EnqueueOutcome", ENQUEUE_OUTCOMES),
        ("NonReplaceableReason", NON_REPLACEABLE_REASONS),
        ("RedriveOutcome", REDRIVE_OUTCOMES),
    ];
    w.count(tables.len())?;
    for (name, table) in tables {
        w.string(name)?;
        w.count(table.len())?;
        for &(constant, code) in table {
            w.string(constant)?;
            w.i32(code);
        }
    }
    w.count(crate::NATIVES.len())?;
    for native in crate::NATIVES {
        w.string(native.name)?;
        w.string(SIGNATURE)?;
    }
    w.count(fields::wire_layout().count())?;
    for (name, wire) in fields::wire_layout() {
        w.string(name)?;
        w.string(wire.kind())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_within_a_table() {
        for table in [
            JOB_STATES,
            ENQUEUE_OUTCOMES,
            NON_REPLACEABLE_REASONS,
            REDRIVE_OUTCOMES,
        ] {
            let mut codes: Vec<i32> = table.iter().map(|&(_, c)| c).collect();
            codes.sort_unstable();
            codes.dedup();
            assert_eq!(codes.len(), table.len());
        }
    }

    #[test]
    fn stored_states_have_codes() {
        assert_eq!(job_state("dead").ok(), Some(6));
        assert!(job_state("lost").is_err());
    }
}
