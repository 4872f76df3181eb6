//! Checks the core against the shared auto-key reference vectors in `tests/vectors/auto_keys.json`
//! at the repository root (the same file `tests/check_vectors.py` checks independently).

use std::collections::HashSet;
use std::path::PathBuf;

use flexiq_core::canonical::canonicalize;
use flexiq_core::recipe::auto_key;
use serde_json::Value;

const MIN_VECTORS: usize = 30;

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/auto_keys.json")
}

fn text_field<'a>(vector: &'a Value, field: &str) -> Result<&'a str, String> {
    vector
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("field {field:?} is missing or not a string"))
}

/// Returns every problem with one vector (empty when it checks out).
fn check(vector: &Value) -> Result<Vec<String>, String> {
    let task = text_field(vector, "task")?;
    let payload = text_field(vector, "payload")?;
    let canonical = text_field(vector, "canonical")?;
    let key = text_field(vector, "key")?;
    let mut problems = Vec::new();

    let produced = canonicalize(payload.as_bytes()).map_err(|e| format!("payload refused: {e}"))?;
    if produced != canonical.as_bytes() {
        problems.push(format!(
            "canonicalize(payload) differs: expected {}, got {}",
            preview(canonical.as_bytes()),
            preview(&produced)
        ));
    }

    let recanonical =
        canonicalize(canonical.as_bytes()).map_err(|e| format!("canonical refused: {e}"))?;
    if recanonical != canonical.as_bytes() {
        problems.push(format!(
            "canonicalize(canonical) is not idempotent: got {}",
            preview(&recanonical)
        ));
    }

    let from_canonical = auto_key(task, canonical.as_bytes()).map_err(|e| e.to_string())?;
    if from_canonical != key {
        problems.push(format!(
            "auto_key(task, canonical) differs: expected {key}, got {from_canonical}"
        ));
    }
    let from_payload = auto_key(task, &produced).map_err(|e| e.to_string())?;
    if from_payload != from_canonical {
        problems.push(format!(
            "auto_key of canonicalize(payload) is {from_payload}, of canonical {from_canonical}"
        ));
    }
    Ok(problems)
}

fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let chars = text.chars().count();
    if chars > 120 {
        let head: String = text.chars().take(120).collect();
        format!("{head:?}...({chars} chars)")
    } else {
        format!("{text:?}")
    }
}

#[test]
fn core_matches_the_reference_vectors() {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let document: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let vectors = document["vectors"]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no \"vectors\" array", path.display()));
    assert!(
        vectors.len() >= MIN_VECTORS,
        "only {} vectors in {}; at least {MIN_VECTORS} are required",
        vectors.len(),
        path.display()
    );

    let mut failures = Vec::new();
    let mut names = HashSet::new();
    for (index, vector) in vectors.iter().enumerate() {
        let name = vector["name"]
            .as_str()
            .map_or_else(|| format!("#{index}"), str::to_owned);
        if !names.insert(name.clone()) {
            failures.push(format!("{name}: duplicate vector name"));
        }
        match check(vector) {
            Ok(problems) => failures.extend(problems.into_iter().map(|p| format!("{name}: {p}"))),
            Err(problem) => failures.push(format!("{name}: {problem}")),
        }
    }

    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        vectors.len(),
        failures.join("\n")
    );
}

/// Whether `message` names `path` as a whole ("at $.a" names $.a, not $.a.b or $.a[0]).
fn names_path(message: &str, path: &str) -> bool {
    let needle = format!("at {path}");
    message
        .match_indices(&needle)
        .any(|(at, _)| !matches!(message[at + needle.len()..].chars().next(), Some('.' | '[')))
}

#[test]
fn core_refuses_the_invalid_vectors_naming_the_path() {
    let path = vectors_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let document: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let invalid = document["invalid"]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no \"invalid\" array", path.display()));
    assert!(
        invalid.len() >= 10,
        "only {} invalid vectors",
        invalid.len()
    );
    let mut failures = Vec::new();
    for vector in invalid {
        let name = vector["name"].as_str().unwrap_or("?");
        let (Some(payload), Some(json_path)) =
            (vector["payload"].as_str(), vector["path"].as_str())
        else {
            failures.push(format!("{name}: payload or path missing"));
            continue;
        };
        match canonicalize(payload.as_bytes()) {
            Ok(canonical) => failures.push(format!("{name}: accepted as {}", preview(&canonical))),
            Err(e) if !names_path(&e.to_string(), json_path) => {
                failures.push(format!("{name}: refused without naming {json_path}: {e}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
