//! The job request's fields as SQL: the placeholders that the enqueue statements and functions
//! write instead of listing every field by hand, filled from [`FIELDS`](super::fields::FIELDS).
//!
//! A placeholder is `{name}` or `{name:pattern}`. A pattern names each parameter's value: `*`
//! stands for the parameter's name (`p_*[1]` gives `p_queue[1]`), a pattern without `*` is a
//! prefix (`p.` gives `p.queue`), and `$` gives the parameter itself, numbered and cast to its
//! element type (`$8::text`), `$[]` to its array type (`$8::text[]`). Every list is in the
//! parameters' order, comma-separated.
//!
//! | placeholder | gives, for each parameter |
//! |---|---|
//! | `{request_arrays}` | `$1::text[] AS task`: the statement's parameters as arrays |
//! | `{request_args:P}` | its value (an argument list) |
//! | `{request_signature}` | `p_task text[]`: a function's parameters |
//! | `{request_types}` | `text[]`: a function's identity, for `REVOKE` |
//! | `{request_names}` | `task`: column aliases, as of `unnest(…) AS e(…)` |
//! | `{request_declarations:P}` | `v_task text;`: PL/pgSQL variables, one a line |
//! | `{param:name}`, `{param:+k}` | the number of one parameter (`$3`), or of the k-th after the last |
//! | `{new_job_columns}` | the jobs columns `new_jobs` returns, for `INSERT INTO jobs (…)` |
//! | `{new_job_columns_typed}` | the same with their types, for its `RETURNS TABLE (…)` |
//! | `{stored_values:P}` | for each stored parameter, its stored value |
//! | `{stored_assignments:P}` | `column = value` for each stored parameter but the key's |
//! | `{compared_stored:P}` | for each parameter a replay is compared on, its column (`j.`) |
//! | `{compared_requested:P}` | for each, the value it would be stored as |
//!
//! The two `compared` lists make the tuples that decide whether a replay asks for what its
//! holder was accepted with; the payload is compared beside them, by its fingerprint.

use super::fields::{params, Param};

/// The jobs columns `new_jobs` works out itself, before the stored parameters, with their types.
const DERIVED_COLUMNS: &[(&str, &str)] = &[
    ("id", "bigint"),
    ("state", "text"),
    ("run_at", "timestamptz"),
    ("key_held", "boolean"),
    ("retain_until", "timestamptz"),
    ("held_until", "timestamptz"),
    ("created_at", "timestamptz"),
    ("deadline", "timestamptz"),
    ("concurrency_key", "text"),
    ("concurrency_limit", "integer"),
];

/// `template` with every placeholder of the request's fields filled in; other braces stay.
pub fn expand(template: &str) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let filled = after
            .find('}')
            .and_then(|close| fill(&after[..close]).map(|text| (text, close)));
        match filled {
            Some((text, close)) => {
                out.push_str(&text);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text of one placeholder (`name` or `name:pattern`), or `None` when it is not one.
fn fill(placeholder: &str) -> Option<String> {
    let (name, pattern) = match placeholder.split_once(':') {
        Some((name, pattern)) => (name, Some(pattern)),
        None => (placeholder, None),
    };
    let numbered = || params().zip(1..);
    let list = |items: Vec<String>| Some(items.join(", "));
    match (name, pattern) {
        ("request_arrays", None) => list(
            numbered()
                .map(|(p, n)| format!("${n}::{}[] AS {}", p.sql_type, p.name))
                .collect(),
        ),
        ("request_args", Some(pat)) => list(numbered().map(|(p, n)| value(pat, p, n)).collect()),
        ("request_signature", None) => list(
            params()
                .map(|p| format!("p_{} {}[]", p.name, p.sql_type))
                .collect(),
        ),
        ("request_types", None) => list(params().map(|p| format!("{}[]", p.sql_type)).collect()),
        ("request_names", None) => list(params().map(|p| p.name.to_owned()).collect()),
        ("request_declarations", Some(pat)) => Some(
            params()
                .map(|p| format!("{} {};", apply(pat, p.name), p.sql_type))
                .collect::<Vec<_>>()
                .join("\n    "),
        ),
        ("param", Some(which)) => match which.strip_prefix('+') {
            Some(k) => k
                .parse::<usize>()
                .ok()
                .map(|k| format!("${}", params().count() + k)),
            None => numbered()
                .find(|(p, _)| p.name == which)
                .map(|(_, n)| format!("${n}")),
        },
        ("new_job_columns", None) => list(
            DERIVED_COLUMNS
                .iter()
                .map(|(c, _)| (*c).to_owned())
                .chain(params().filter_map(|p| Some(p.stored.as_ref()?.column.to_owned())))
                .collect(),
        ),
        ("new_job_columns_typed", None) => list(
            DERIVED_COLUMNS
                .iter()
                .map(|(c, t)| format!("{c} {t}"))
                .chain(params().filter_map(|p| {
                    let s = p.stored.as_ref()?;
                    Some(format!("{} {}", s.column, s.sql_type))
                }))
                .collect(),
        ),
        ("stored_values", Some(pat)) => list(
            numbered()
                .filter_map(|(p, n)| Some(stored(p, &value(pat, p, n))?.to_owned()))
                .collect(),
        ),
        ("stored_assignments", Some(pat)) => list(
            numbered()
                .filter(|(p, _)| !p.key)
                .filter_map(|(p, n)| {
                    let column = p.stored.as_ref()?.column;
                    Some(format!("{column} = {}", stored(p, &value(pat, p, n))?))
                })
                .collect(),
        ),
        ("compared_stored", Some(pat)) => list(
            params()
                .filter(|p| p.compared)
                .filter_map(|p| Some(apply(pat, p.stored.as_ref()?.column)))
                .collect(),
        ),
        ("compared_requested", Some(pat)) => list(
            numbered()
                .filter(|(p, _)| p.compared)
                .filter_map(|(p, n)| stored(p, &value(pat, p, n)))
                .collect(),
        ),
        _ => None,
    }
}

/// A parameter's value by `pattern` (see the module's text); `n` is its number.
fn value(pattern: &str, p: &Param, n: usize) -> String {
    match pattern {
        "$" => format!("${n}::{}", p.sql_type),
        "$[]" => format!("${n}::{}[]", p.sql_type),
        _ => apply(pattern, p.name),
    }
}

fn apply(pattern: &str, name: &str) -> String {
    if pattern.contains('*') {
        pattern.replace('*', name)
    } else {
        format!("{pattern}{name}")
    }
}

/// The value stored for a parameter whose value is `value`; `None` when it is not stored.
fn stored(p: &Param, value: &str) -> Option<String> {
    Some(p.stored.as_ref()?.expr.replace('*', value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_other_braces_stay() {
        let sql = expand("SELECT f({request_args:p.}) FROM t WHERE x = '{}' AND y #> '{a,b}'");
        assert!(
            sql.starts_with("SELECT f(p.task, p.payload, p.payload_codec, "),
            "{sql}"
        );
        let last = params().last().expect("parameters").name;
        assert!(
            sql.ends_with(&format!(
                "p.{last}) FROM t WHERE x = '{{}}' AND y #> '{{a,b}}'"
            )),
            "{sql}"
        );
        assert_eq!(
            expand("{unknown} {request_args} {"),
            "{unknown} {request_args} {"
        );
    }

    #[test]
    fn arrays_are_numbered_in_order_and_params_found_by_name() {
        let arrays = expand("{request_arrays}");
        assert!(
            arrays.starts_with("$1::text[] AS task, $2::bytea[] AS payload, "),
            "{arrays}"
        );
        let n = params().count();
        let last = params().last().expect("parameters");
        assert!(
            arrays.ends_with(&format!("${n}::{}[] AS {}", last.sql_type, last.name)),
            "{arrays}"
        );
        assert_eq!(expand("{param:task}"), "$1");
        assert_eq!(expand("{param:+1}"), format!("${}", n + 1));
        assert_eq!(expand("{param:nothing}"), "{param:nothing}");
    }

    #[test]
    fn stored_values_follow_the_columns_they_fill() {
        let columns = expand("{new_job_columns}");
        let values = expand("{stored_values:e.}");
        assert!(
            values.contains("{schema}.micros_to_timestamptz(e.run_at_micros), e.delay_ms"),
            "{values}"
        );
        let columns: Vec<&str> = columns.split(", ").collect();
        let values: Vec<&str> = values.split(", ").collect();
        assert_eq!(columns.len(), DERIVED_COLUMNS.len() + values.len());
        // Each column the request fills, after the derived ones, faces the value of its field.
        let filled = params().filter_map(|p| Some((p.name, p.stored.as_ref()?.column)));
        for ((field, column), (at, value)) in filled.zip(values.iter().enumerate()) {
            assert_eq!(columns[DERIVED_COLUMNS.len() + at], column);
            assert!(value.contains(&format!("e.{field}")), "{column}: {value}");
        }
    }

    #[test]
    fn compared_tuples_pair_columns_with_requested_values() {
        let stored = expand("{compared_stored:j.}");
        let requested = expand("{compared_requested:$}");
        assert!(
            stored.starts_with("j.task, j.queue, j.priority, j.requested_run_at"),
            "{stored}"
        );
        assert!(
            requested.contains("{schema}.micros_to_timestamptz($10::bigint)"),
            "{requested}"
        );
        assert_eq!(stored.split(", ").count(), requested.split(", ").count());
        let assignments = expand("{stored_assignments:p_*[1]}");
        assert!(
            assignments.starts_with("task = p_task[1], payload = p_payload[1]"),
            "{assignments}"
        );
        for key in ["key_scope", "key_digest", "key_preview"] {
            assert!(!assignments.contains(key), "{assignments}");
        }
    }
}
