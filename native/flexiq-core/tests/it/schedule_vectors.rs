//! Checks the core against the shared cron schedule vectors in `tests/vectors/schedule_ticks.json`
//! at the repository root: the ticks around an instant and the dedup key of a tick.

use std::path::PathBuf;

use chrono::{DateTime, SecondsFormat, Utc};
use flexiq_core::cron::{tick_key, CronSchedule};
use serde_json::Value;

fn micros(text: &str) -> i64 {
    DateTime::parse_from_rfc3339(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .timestamp_micros()
}

fn rfc3339(micros: i64) -> String {
    DateTime::<Utc>::from_timestamp_micros(micros)
        .expect("in range")
        .to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

#[test]
fn core_matches_the_schedule_vectors() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/schedule_ticks.json");
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("vectors file")).expect("JSON");
    let vectors = file["vectors"].as_array().expect("vectors");
    assert!(vectors.len() >= 8, "only {} vectors", vectors.len());
    let mut failures = Vec::new();
    for v in vectors {
        let name = v["name"].as_str().expect("name");
        let text = |field: &str| v[field].as_str().map(str::to_owned);
        let schedule = CronSchedule::parse(
            v["cron"].as_str().expect("cron"),
            v["zone"].as_str().expect("zone"),
        )
        .expect("vectors parse");
        let at = micros(&text("at").expect("at"));
        let latest = schedule.latest_at_or_before(at).expect("latest");
        if latest.map(rfc3339) != text("latest") {
            failures.push(format!("{name}: latest was {:?}", latest.map(rfc3339)));
        }
        let next = schedule.next_after(at).ok().map(rfc3339);
        if next != text("next") {
            failures.push(format!("{name}: next was {next:?}"));
        }
        let key = latest.map(|tick| tick_key(v["schedule"].as_str().expect("schedule"), tick));
        let key = key.transpose().expect("key");
        if key != text("key") {
            failures.push(format!("{name}: key was {key:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
