//! Cron schedules: parsing an expression in an IANA time zone, stepping from one tick to the
//! next, and the dedup key of a tick. Every binding computes ticks and keys here, so that
//! processes written in different languages enqueue each tick under the same key.
//!
//! Expressions have 5 fields (minute, hour, day of month, month, day of week) or 6 with seconds
//! first; `@daily`-style nicknames work too. Day of month and day of week combine as in Vixie
//! cron: either matching is enough when both are restricted.
//!
//! Around daylight saving changes (Europe/Berlin is the example in the tests):
//! - a tick at a fixed wall-clock time that does not exist that day (02:30 when clocks go from
//!   02:00 to 03:00) fires once, at the first instant after the gap (03:00 local);
//! - a tick at a fixed wall-clock time that happens twice (02:30 when clocks go back from 03:00
//!   to 02:00) fires once, at its first occurrence;
//! - schedules with a wildcard or step in the seconds, minutes or hours fields follow real time:
//!   no tick falls into the gap, and the repeated hour has its ticks twice.
//!
//! Instants are microseconds since the Unix epoch; ticks are whole seconds.

use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};
use chrono_tz::Tz;
use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

use crate::error::{Error, Result};
use crate::validate;

/// The prefix of every tick key.
pub const TICK_KEY_PREFIX: &str = "schedule:";

const MICROS_PER_SECOND: i64 = 1_000_000;

/// A parsed cron expression and the time zone its wall-clock fields are read in.
#[derive(Debug, Clone)]
pub struct CronSchedule {
    expression: String,
    zone: Tz,
    cron: Cron,
}

impl CronSchedule {
    /// Parses `expression` in the IANA time zone `zone` (such as `Europe/Berlin` or `UTC`).
    pub fn parse(expression: &str, zone: &str) -> Result<CronSchedule> {
        let zone = Tz::from_str(zone).map_err(|_| {
            Error::InvalidArgument(format!(
                "unknown time zone {zone:?} for cron expression {expression:?}: use an IANA zone \
                 name such as \"Europe/Berlin\" or \"UTC\""
            ))
        })?;
        let cron = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(expression)
            .map_err(|e| {
                Error::InvalidArgument(format!(
                    "invalid cron expression {expression:?}: {}; write 5 fields (minute hour \
                     day-of-month month day-of-week) or 6 with seconds first, e.g. \"0 2 * * *\" \
                     for 02:00 every day",
                    reason(&e)
                ))
            })?;
        Ok(CronSchedule {
            expression: expression.to_owned(),
            zone,
            cron,
        })
    }

    /// The first tick strictly after `micros`.
    ///
    /// Fails when the expression has no tick within the years the search covers (an
    /// expression such as `0 0 30 2 *`, the 30th of February, never fires).
    pub fn next_after(&self, micros: i64) -> Result<i64> {
        let from = self.at(micros.div_euclid(MICROS_PER_SECOND) * MICROS_PER_SECOND)?;
        // Ticks are whole seconds: after the start of `micros`'s second is after `micros`.
        let tick = self.cron.find_next_occurrence(&from, false).map_err(|e| {
            Error::InvalidArgument(format!(
                "cron expression {:?} in {} has no tick after {}: {}; check its day and month \
                 fields",
                self.expression,
                self.zone.name(),
                rfc3339(micros),
                reason(&e)
            ))
        })?;
        Ok(tick.timestamp() * MICROS_PER_SECOND)
    }

    /// The latest tick at or before `micros`, or `None` when there is none.
    pub fn latest_at_or_before(&self, micros: i64) -> Result<Option<i64>> {
        let from = self.at(micros.div_euclid(MICROS_PER_SECOND) * MICROS_PER_SECOND)?;
        match self.cron.find_previous_occurrence(&from, true) {
            Ok(tick) => Ok(Some(tick.timestamp() * MICROS_PER_SECOND)),
            Err(CronError::TimeSearchLimitExceeded) => Ok(None),
            Err(e) => Err(Error::InvalidArgument(format!(
                "cron expression {:?} in {}: no tick before {}: {}",
                self.expression,
                self.zone.name(),
                rfc3339(micros),
                reason(&e)
            ))),
        }
    }

    fn at(&self, micros: i64) -> Result<DateTime<Tz>> {
        validate::run_at(micros)?;
        let utc = DateTime::<Utc>::from_timestamp_micros(micros).ok_or_else(|| {
            Error::InvalidArgument(format!("instant {micros} µs since 1970 is out of range"))
        })?;
        Ok(utc.with_timezone(&self.zone))
    }
}

/// The longest schedule name, in bytes of UTF-8: with its prefix and a tick it stays a key.
pub const MAX_SCHEDULE_NAME_BYTES: usize = validate::MAX_NAME_BYTES;

/// Checks a schedule's name.
pub fn schedule_name(name: &str) -> Result<()> {
    validate::name("schedule name", name)?;
    if name.trim().is_empty() {
        return Err(Error::InvalidArgument(
            "schedule name must not be blank".to_owned(),
        ));
    }
    Ok(())
}

/// The dedup key of a schedule's tick: `schedule:<name>:<tick in RFC 3339, UTC>`, such as
/// `schedule:nightly-report:2026-03-29T01:00:00Z`. The instant ends the key in a fixed form, so
/// a name holding `:` cannot make two schedules' keys meet.
pub fn tick_key(name: &str, tick_micros: i64) -> Result<String> {
    schedule_name(name)?;
    validate::run_at(tick_micros)?;
    let key = format!("{TICK_KEY_PREFIX}{name}:{}", rfc3339(tick_micros));
    validate::key(&key)?;
    Ok(key)
}

/// An instant in RFC 3339, UTC, with fractional seconds only when it has them.
fn rfc3339(micros: i64) -> String {
    DateTime::<Utc>::from_timestamp_micros(micros)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
        .unwrap_or_else(|| format!("{micros} µs since 1970"))
}

/// Croner's explanation, without its variant names.
fn reason(e: &CronError) -> String {
    match e {
        CronError::TimeSearchLimitExceeded => "no matching time within the search limit".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Microseconds of an RFC 3339 instant.
    fn at(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text)
            .expect("test instant")
            .timestamp_micros()
    }

    fn ticks(schedule: &CronSchedule, from: &str, count: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut t = at(from);
        for _ in 0..count {
            t = schedule.next_after(t).expect("next tick");
            out.push(rfc3339(t));
        }
        out
    }

    fn berlin(expression: &str) -> CronSchedule {
        CronSchedule::parse(expression, "Europe/Berlin").expect("valid expression")
    }

    #[test]
    fn five_and_six_fields() {
        let minute = CronSchedule::parse("*/15 * * * *", "UTC").expect("5 fields");
        assert_eq!(
            ticks(&minute, "2026-01-01T10:07:30Z", 2),
            ["2026-01-01T10:15:00Z", "2026-01-01T10:30:00Z"]
        );
        let second = CronSchedule::parse("*/20 * * * * *", "UTC").expect("6 fields");
        assert_eq!(
            ticks(&second, "2026-01-01T10:00:00.5Z", 3),
            [
                "2026-01-01T10:00:20Z",
                "2026-01-01T10:00:40Z",
                "2026-01-01T10:01:00Z"
            ]
        );
        let daily = CronSchedule::parse("@daily", "UTC").expect("nickname");
        assert_eq!(
            ticks(&daily, "2026-01-01T10:00:00Z", 1),
            ["2026-01-02T00:00:00Z"]
        );
    }

    #[test]
    fn refusals_name_the_expression_or_zone_and_the_fix() {
        let message =
            |e: &str, z: &str| CronSchedule::parse(e, z).expect_err("refused").to_string();
        let zone = message("0 2 * * *", "Europe/Berln");
        assert!(
            zone.contains("unknown time zone \"Europe/Berln\""),
            "{zone}"
        );
        assert!(zone.contains("IANA zone name"), "{zone}");
        let fields = message("0 2 * *", "UTC");
        assert!(
            fields.starts_with("invalid cron expression \"0 2 * *\""),
            "{fields}"
        );
        assert!(fields.contains("write 5 fields"), "{fields}");
        // Seven fields (a year) are not accepted: other bindings' parsers may not know them.
        assert!(CronSchedule::parse("0 0 2 * * * 2027", "UTC").is_err());
        let range = message("61 * * * *", "UTC");
        assert!(range.contains("\"61 * * * *\""), "{range}");
        // Every binding sees the same refusal for an expression that never fires.
        let never = CronSchedule::parse("0 0 30 2 *", "UTC").expect("parses");
        let e = never
            .next_after(at("2026-01-01T00:00:00Z"))
            .expect_err("no tick");
        assert!(e.to_string().contains("has no tick after"), "{e}");
    }

    #[test]
    fn next_is_strictly_after_and_latest_is_at_or_before() {
        let every_second = CronSchedule::parse("* * * * * *", "UTC").expect("valid");
        let t = at("2026-05-01T12:00:07Z");
        assert_eq!(every_second.next_after(t).expect("next"), t + 1_000_000);
        assert_eq!(
            every_second.next_after(t + 999_999).expect("next"),
            t + 1_000_000
        );
        assert_eq!(
            every_second.latest_at_or_before(t).expect("latest"),
            Some(t)
        );
        assert_eq!(
            every_second
                .latest_at_or_before(t + 999_999)
                .expect("latest"),
            Some(t)
        );
        let hourly = CronSchedule::parse("0 * * * *", "UTC").expect("valid");
        assert_eq!(
            hourly
                .latest_at_or_before(at("2026-05-01T12:59:59.9Z"))
                .expect("latest")
                .map(rfc3339),
            Some("2026-05-01T12:00:00Z".to_owned())
        );
        let never = CronSchedule::parse("0 0 30 2 *", "UTC").expect("parses");
        assert_eq!(
            never
                .latest_at_or_before(at("2026-01-01T00:00:00Z"))
                .expect("no error"),
            None
        );
    }

    #[test]
    fn zone_sets_the_wall_clock() {
        // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
        let nine = berlin("0 9 * * *");
        assert_eq!(
            ticks(&nine, "2026-01-15T12:00:00Z", 1),
            ["2026-01-16T08:00:00Z"]
        );
        assert_eq!(
            ticks(&nine, "2026-07-15T12:00:00Z", 1),
            ["2026-07-16T07:00:00Z"]
        );
    }

    #[test]
    fn spring_forward_runs_a_missing_wall_clock_time_once_after_the_gap() {
        // 2026-03-29 in Berlin: 02:00 CET becomes 03:00 CEST (01:00 UTC); 02:30 does not exist.
        let daily = berlin("30 2 * * *");
        assert_eq!(
            ticks(&daily, "2026-03-27T12:00:00Z", 3),
            [
                "2026-03-28T01:30:00Z", // 02:30 CET
                "2026-03-29T01:00:00Z", // 03:00 CEST, the first instant after the gap
                "2026-03-30T00:30:00Z", // 02:30 CEST
            ]
        );
        // The latest tick before the day after is that one, not a second one.
        assert_eq!(
            daily
                .latest_at_or_before(at("2026-03-29T22:00:00Z"))
                .expect("latest")
                .map(rfc3339),
            Some("2026-03-29T01:00:00Z".to_owned())
        );
        // A half-hourly schedule has no tick in the gap: 01:30 CET is followed by 03:00 CEST.
        let half_hourly = berlin("*/30 * * * *");
        assert_eq!(
            ticks(&half_hourly, "2026-03-29T00:15:00Z", 3),
            [
                "2026-03-29T00:30:00Z", // 01:30 CET
                "2026-03-29T01:00:00Z", // 03:00 CEST
                "2026-03-29T01:30:00Z", // 03:30 CEST
            ]
        );
    }

    #[test]
    fn fall_back_runs_a_repeated_wall_clock_time_once() {
        // 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:30 happens twice.
        let daily = berlin("30 2 * * *");
        assert_eq!(
            ticks(&daily, "2026-10-24T12:00:00Z", 2),
            [
                "2026-10-25T00:30:00Z", // 02:30 CEST, the first occurrence only
                "2026-10-26T01:30:00Z", // 02:30 CET
            ]
        );
        // Looking back from after the second 02:30 finds the first, the one that ran.
        assert_eq!(
            daily
                .latest_at_or_before(at("2026-10-25T01:45:00Z"))
                .expect("latest")
                .map(rfc3339),
            Some("2026-10-25T00:30:00Z".to_owned())
        );
        // An hourly schedule follows real time: the repeated hour has both of its ticks.
        let hourly = berlin("0 * * * *");
        assert_eq!(
            ticks(&hourly, "2026-10-24T23:30:00Z", 3),
            [
                "2026-10-25T00:00:00Z", // 02:00 CEST
                "2026-10-25T01:00:00Z", // 02:00 CET
                "2026-10-25T02:00:00Z", // 03:00 CET
            ]
        );
    }

    #[test]
    fn tick_key_names_schedule_and_instant() {
        assert_eq!(
            tick_key("nightly-report", at("2026-03-29T01:00:00Z")).expect("key"),
            "schedule:nightly-report:2026-03-29T01:00:00Z"
        );
        // The same instant written in any zone gives the same key.
        assert_eq!(
            tick_key("r", at("2026-03-29T03:00:00+02:00")).expect("key"),
            tick_key("r", at("2026-03-29T01:00:00Z")).expect("key")
        );
        assert_eq!(
            tick_key("r", at("2026-03-29T01:00:00.25Z")).expect("key"),
            "schedule:r:2026-03-29T01:00:00.250Z"
        );
        assert!(tick_key("", 0).is_err());
        assert_eq!(
            tick_key("  ", 0).expect_err("blank").to_string(),
            "schedule name must not be blank"
        );
        assert!(tick_key("a\0b", 0).is_err());
        assert!(tick_key(&"n".repeat(MAX_SCHEDULE_NAME_BYTES), 0).is_ok());
        assert!(tick_key(&"n".repeat(MAX_SCHEDULE_NAME_BYTES + 1), 0).is_err());
        assert!(tick_key("r", i64::MAX).is_err());
    }
}
