//! A statement as any driver can run it: its text, and its parameters, each an array of one
//! PostgreSQL type. The core runs such statements itself through sqlx; a binding that runs them
//! on a connection of its own (JDBC, in the application's transaction) gets the same text with
//! positional `?` placeholders and the same arrays.

use sqlx::postgres::{PgArguments, Postgres};
use sqlx::query::Query;
use sqlx::{Encode, Type};

/// One parameter: an array, with NULL elements where a value is absent.
#[derive(Debug, Clone, PartialEq)]
pub enum Param<'a> {
    Bytea(Vec<Option<&'a [u8]>>),
    Text(Vec<Option<&'a str>>),
    Int4(Vec<Option<i32>>),
    Int8(Vec<Option<i64>>),
    Float8(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

impl Param<'_> {
    /// The PostgreSQL name of the element type, as `java.sql.Connection.createArrayOf` takes it.
    pub fn element_type(&self) -> &'static str {
        match self {
            Param::Bytea(_) => "bytea",
            Param::Text(_) => "text",
            Param::Int4(_) => "int4",
            Param::Int8(_) => "int8",
            Param::Float8(_) => "float8",
            Param::Bool(_) => "bool",
        }
    }
}

/// How parameters go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// Each as its array.
    Arrays,
    /// Each as its first value alone: for a statement about one entry, which PostgreSQL then
    /// reads without building an array per parameter and taking its element (a third of its
    /// time on a replay's read).
    FirstValues,
}

/// Binds the parameters, in order.
pub(crate) fn bind<'q>(
    mut query: Query<'q, Postgres, PgArguments>,
    params: &'q [Param<'q>],
    binding: Binding,
) -> Query<'q, Postgres, PgArguments> {
    for p in params {
        query = match p {
            Param::Bytea(v) => bind_one(query, v, binding),
            Param::Text(v) => bind_one(query, v, binding),
            Param::Int4(v) => bind_one(query, v, binding),
            Param::Int8(v) => bind_one(query, v, binding),
            Param::Float8(v) => bind_one(query, v, binding),
            Param::Bool(v) => bind_one(query, v, binding),
        };
    }
    query
}

fn bind_one<'q, T>(
    query: Query<'q, Postgres, PgArguments>,
    values: &'q Vec<Option<T>>,
    binding: Binding,
) -> Query<'q, Postgres, PgArguments>
where
    T: Copy + Send + Encode<'q, Postgres> + Type<Postgres> + 'q,
    &'q Vec<Option<T>>: Encode<'q, Postgres> + Type<Postgres> + Send,
{
    match binding {
        Binding::Arrays => query.bind(values),
        Binding::FirstValues => query.bind(values.first().copied().flatten()),
    }
}

/// The statement with `$1`, `$2`, … replaced by `?`, as JDBC takes it. The statements this is
/// used for name each parameter once, in order; the test below holds them to that.
pub(crate) fn positional(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

/// Fails unless `sql` (with `$n` placeholders, as sent) names each parameter once, in order,
/// and holds no `?`, so that [`positional`] turns it into what JDBC runs.
#[cfg(test)]
pub(crate) fn assert_fit_for_positional(sql: &str) {
    let mut numbers = Vec::new();
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>() {
            numbers.push(n);
        }
    }
    assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "{sql}");
    assert!(!numbers.is_empty(), "no parameter: {sql}");
    assert!(
        !sql.contains('?'),
        "a ? would be taken for a placeholder: {sql}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_question_marks() {
        assert_eq!(
            positional("SELECT f($1::int[], $12::text[]) -- $ alone stays"),
            "SELECT f(?::int[], ?::text[]) -- $ alone stays"
        );
    }

    #[test]
    fn enqueue_statements_name_each_parameter_once_in_order() {
        for template in [
            include_str!("../sql/insert_jobs.sql"),
            include_str!("../sql/resolve_keyed.sql"),
            include_str!("../sql/collapse_job.sql"),
        ] {
            assert_fit_for_positional(
                &crate::schema::Schema::new("s")
                    .expect("valid")
                    .statement(template),
            );
        }
    }
}
