//! The job request, declared once: every field with how a binding sends it, the statement
//! parameter it becomes, the jobs column that stores it, and whether a replay is compared on it.
//!
//! What is written per field anywhere else is derived from [`FIELDS`]:
//! - the parameter lists, argument lists and signatures of the enqueue statements and functions
//!   (placeholders in the SQL files, filled by `request::sql`);
//! - the arrays a statement binds, one per parameter ([`Param::column`]);
//! - the wire reader of a binding's bridge, which reads each field by its [`Wire`] kind, in this
//!   order, and sets it on a [`Draft`];
//! - the Java writer, which the Java side checks against [`wire_layout`] when it first enqueues.
//!
//! Adding a field: a row here (with the request's field it sets and reads), a migration for its
//! column, and the Java builder and writer row.

use super::{Encoded, JobRequest, Schedule};
use crate::error::{Error, Result};
use crate::recipe;

/// One field of a job request.
pub struct Field {
    /// The name bindings send it under and messages use.
    pub name: &'static str,
    /// How a binding sends it; `None` for what the core works out from other fields.
    pub wire: Option<Wire>,
    /// The statement parameter it becomes; `None` for what travels inside another parameter
    /// (the flow options inside `flow`) or only steers the core (`canonicalize`, `deriveKey`).
    pub param: Option<Param>,
}

/// How a binding sends a field, with what sets it on the request being read.
pub enum Wire {
    Bool(fn(&mut Draft, bool)),
    I32(fn(&mut Draft, i32)),
    I64(fn(&mut Draft, i64)),
    F64(fn(&mut Draft, f64)),
    OptI64(fn(&mut Draft, Option<i64>)),
    /// Exact text, never null (keys, names).
    Text(fn(&mut Draft, String)),
    OptText(fn(&mut Draft, Option<String>)),
    /// A list of non-null exact texts.
    Texts(fn(&mut Draft, Vec<String>)),
    Bytes(fn(&mut Draft, Vec<u8>)),
    OptBytes(fn(&mut Draft, Option<Vec<u8>>)),
}

impl Wire {
    /// The kind's name, as the Java writer names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Wire::Bool(_) => "bool",
            Wire::I32(_) => "i32",
            Wire::I64(_) => "i64",
            Wire::F64(_) => "f64",
            Wire::OptI64(_) => "optI64",
            Wire::Text(_) => "text",
            Wire::OptText(_) => "optText",
            Wire::Texts(_) => "texts",
            Wire::Bytes(_) => "bytes",
            Wire::OptBytes(_) => "optBytes",
        }
    }
}

/// A statement parameter: one array per batch, one element per entry.
pub struct Param {
    /// `p.<name>` in statements, `p_<name>` in functions.
    pub name: &'static str,
    /// The PostgreSQL type of its elements.
    pub sql_type: &'static str,
    /// Each entry's element.
    pub value: Value,
    /// The jobs column that stores it; `None` when it is not stored.
    pub stored: Option<Stored>,
    /// Whether a replay is compared on it. (The payload is compared through
    /// `payload_fingerprint`, with its codec's digest, by each statement.)
    pub compared: bool,
    /// Whether it names the key (its scope, digest or preview), which a debounce never replaces.
    pub key: bool,
}

/// Where a parameter is stored.
pub struct Stored {
    pub column: &'static str,
    /// The stored value, `*` standing for the parameter's.
    pub expr: &'static str,
    /// The column's type.
    pub sql_type: &'static str,
}

/// An entry's element of a parameter, by element type.
pub enum Value {
    Bytea(for<'a> fn(&'a Entry<'a>) -> Option<&'a [u8]>),
    Text(for<'a> fn(&'a Entry<'a>) -> Option<&'a str>),
    Int4(fn(&Entry<'_>) -> Option<i32>),
    Int8(fn(&Entry<'_>) -> Option<i64>),
    Float8(fn(&Entry<'_>) -> Option<f64>),
}

/// One entry of a statement, with what its parameters are worked out from.
pub struct Entry<'a> {
    pub request: &'a JobRequest,
    /// The tags as stored: a JSON array, sorted, each once.
    pub tags: String,
    /// The flow options as stored: a JSON object, or `None` when none is set.
    pub flow: Option<String>,
    pub key_digest: Option<Vec<u8>>,
    pub key_preview: Option<String>,
}

impl<'a> Entry<'a> {
    /// The entry of `request`, with the digest of its key as worked out already (or `None`).
    pub fn new(request: &'a JobRequest, key_digest: Option<Vec<u8>>) -> Entry<'a> {
        Entry {
            tags: serde_json::to_string(&request.sorted_tags()).unwrap_or_else(|_| "[]".into()),
            flow: request.flow.json(),
            key_preview: request.key.as_deref().map(crate::keys::preview),
            key_digest,
            request,
        }
    }
}

impl Param {
    /// The parameter's array over `entries`.
    pub fn column<'a>(&self, entries: &'a [Entry<'a>]) -> crate::statement::Param<'a> {
        use crate::statement::Param as P;
        match self.value {
            Value::Bytea(f) => P::Bytea(entries.iter().map(f).collect()),
            Value::Text(f) => P::Text(entries.iter().map(f).collect()),
            Value::Int4(f) => P::Int4(entries.iter().map(f).collect()),
            Value::Int8(f) => P::Int8(entries.iter().map(f).collect()),
            Value::Float8(f) => P::Float8(entries.iter().map(f).collect()),
        }
    }
}

/// A parameter stored as itself in the column of its name.
const fn column(name: &'static str, sql_type: &'static str) -> Option<Stored> {
    Some(Stored {
        column: name,
        expr: "*",
        sql_type,
    })
}

/// A parameter a replay is compared on, stored in the column of its name.
const fn compared(name: &'static str, sql_type: &'static str, value: Value) -> Option<Param> {
    Some(Param {
        name,
        sql_type,
        value,
        stored: column(name, sql_type),
        compared: true,
        key: false,
    })
}

/// Every field of a job request, in the order bindings send them; the parameters in the same
/// order are the enqueue statements' `$1`, `$2`, ….
pub const FIELDS: &[Field] = &[
    Field {
        name: "task",
        wire: Some(Wire::Text(|d, v| d.request.task = v)),
        param: compared("task", "text", Value::Text(|e| Some(&e.request.task))),
    },
    Field {
        name: "canonicalize",
        wire: Some(Wire::Bool(|d, v| d.canonicalize = v)),
        param: None,
    },
    Field {
        name: "payload",
        wire: Some(Wire::Bytes(|d, v| d.request.payload = v)),
        param: Some(Param {
            name: "payload",
            sql_type: "bytea",
            value: Value::Bytea(|e| Some(e.request.stored_payload())),
            stored: column("payload", "bytea"),
            compared: false,
            key: false,
        }),
    },
    Field {
        name: "codec",
        wire: Some(Wire::OptText(|d, v| d.codec = v)),
        param: Some(Param {
            name: "payload_codec",
            sql_type: "text",
            value: Value::Text(|e| e.request.encoded.as_ref().map(|c| c.codec.as_str())),
            stored: column("payload_codec", "text"),
            compared: false,
            key: false,
        }),
    },
    Field {
        name: "encoded",
        wire: Some(Wire::OptBytes(|d, v| d.encoded = v)),
        param: None,
    },
    Field {
        name: "codecDigest",
        wire: Some(Wire::OptBytes(|d, v| d.codec_digest = v)),
        param: Some(Param {
            name: "payload_digest",
            sql_type: "bytea",
            value: Value::Bytea(|e| e.request.encoded.as_ref().map(|c| c.digest.as_slice())),
            stored: column("payload_digest", "bytea"),
            compared: false,
            key: false,
        }),
    },
    Field {
        name: "deriveKey",
        wire: Some(Wire::Bool(|d, v| d.derive_key = v)),
        param: None,
    },
    Field {
        name: "key",
        wire: Some(Wire::OptText(|d, v| d.request.key = v)),
        param: None,
    },
    Field {
        name: "scope",
        wire: Some(Wire::Text(|d, v| d.request.scope = v)),
        param: Some(Param {
            name: "scope",
            sql_type: "text",
            value: Value::Text(|e| Some(&e.request.scope)),
            stored: Some(Stored {
                column: "key_scope",
                expr: "*",
                sql_type: "text",
            }),
            compared: false,
            key: true,
        }),
    },
    Field {
        name: "keyDigest",
        wire: None,
        param: Some(Param {
            name: "key_digest",
            sql_type: "bytea",
            value: Value::Bytea(|e| e.key_digest.as_deref()),
            stored: column("key_digest", "bytea"),
            compared: false,
            key: true,
        }),
    },
    Field {
        name: "keyPreview",
        wire: None,
        param: Some(Param {
            name: "key_preview",
            sql_type: "text",
            value: Value::Text(|e| e.key_preview.as_deref()),
            stored: column("key_preview", "text"),
            compared: false,
            key: true,
        }),
    },
    Field {
        name: "queue",
        wire: Some(Wire::Text(|d, v| d.request.queue = v)),
        param: compared("queue", "text", Value::Text(|e| Some(&e.request.queue))),
    },
    Field {
        name: "priority",
        wire: Some(Wire::I32(|d, v| d.request.priority = v)),
        param: compared(
            "priority",
            "integer",
            Value::Int4(|e| Some(e.request.priority)),
        ),
    },
    Field {
        name: "runAt",
        wire: Some(Wire::OptI64(|d, v| d.run_at_micros = v)),
        param: Some(Param {
            name: "run_at_micros",
            sql_type: "bigint",
            value: Value::Int8(|e| match e.request.schedule {
                Schedule::At { micros } => Some(micros),
                _ => None,
            }),
            stored: Some(Stored {
                column: "requested_run_at",
                expr: "{schema}.micros_to_timestamptz(*)",
                sql_type: "timestamptz",
            }),
            compared: true,
            key: false,
        }),
    },
    Field {
        name: "delay",
        wire: Some(Wire::OptI64(|d, v| d.delay_ms = v)),
        param: Some(Param {
            name: "delay_ms",
            sql_type: "bigint",
            value: Value::Int8(|e| match e.request.schedule {
                Schedule::Delay { millis } => Some(millis),
                _ => None,
            }),
            stored: Some(Stored {
                column: "requested_delay_ms",
                expr: "*",
                sql_type: "bigint",
            }),
            compared: true,
            key: false,
        }),
    },
    Field {
        name: "maxAttempts",
        wire: Some(Wire::I32(|d, v| d.request.max_attempts = v)),
        param: compared(
            "max_attempts",
            "integer",
            Value::Int4(|e| Some(e.request.max_attempts)),
        ),
    },
    Field {
        name: "retryInitialDelay",
        wire: Some(Wire::I64(|d, v| d.request.retry.initial_ms = v)),
        param: compared(
            "retry_initial_ms",
            "bigint",
            Value::Int8(|e| Some(e.request.retry.initial_ms)),
        ),
    },
    Field {
        name: "retryMaxDelay",
        wire: Some(Wire::I64(|d, v| d.request.retry.max_ms = v)),
        param: compared(
            "retry_max_ms",
            "bigint",
            Value::Int8(|e| Some(e.request.retry.max_ms)),
        ),
    },
    Field {
        name: "retryMultiplier",
        wire: Some(Wire::F64(|d, v| d.request.retry.multiplier = v)),
        param: compared(
            "retry_multiplier",
            "double precision",
            Value::Float8(|e| Some(e.request.retry.multiplier)),
        ),
    },
    Field {
        name: "retryJitter",
        wire: Some(Wire::F64(|d, v| d.request.retry.jitter = v)),
        param: compared(
            "retry_jitter",
            "double precision",
            Value::Float8(|e| Some(e.request.retry.jitter)),
        ),
    },
    Field {
        name: "timeout",
        wire: Some(Wire::OptI64(|d, v| d.request.timeout_ms = v)),
        param: compared(
            "timeout_ms",
            "bigint",
            Value::Int8(|e| e.request.timeout_ms),
        ),
    },
    Field {
        name: "tags",
        wire: Some(Wire::Texts(|d, v| d.request.tags = v)),
        param: compared("tags", "jsonb", Value::Text(|e| Some(&e.tags))),
    },
    Field {
        name: "keyRetention",
        wire: Some(Wire::OptI64(|d, v| d.request.key_retention_ms = v)),
        param: compared(
            "key_retention_ms",
            "bigint",
            Value::Int8(|e| e.request.key_retention_ms),
        ),
    },
    Field {
        name: "deadline",
        wire: Some(Wire::OptI64(|d, v| d.request.flow.deadline_micros = v)),
        param: None,
    },
    Field {
        name: "concurrencyKey",
        wire: Some(Wire::OptText(|d, v| d.request.flow.concurrency_key = v)),
        param: None,
    },
    Field {
        name: "concurrencyLimit",
        wire: Some(Wire::OptI64(|d, v| d.concurrency_limit = v)),
        param: None,
    },
    Field {
        name: "debounce",
        wire: Some(Wire::OptI64(|d, v| d.request.flow.debounce_ms = v)),
        param: None,
    },
    Field {
        name: "maxWait",
        wire: Some(Wire::OptI64(|d, v| d.request.flow.max_wait_ms = v)),
        param: None,
    },
    Field {
        name: "throttle",
        wire: Some(Wire::OptI64(|d, v| d.request.flow.throttle_ms = v)),
        param: None,
    },
    Field {
        name: "flow",
        wire: None,
        param: compared("flow", "jsonb", Value::Text(|e| e.flow.as_deref())),
    },
    Field {
        name: "traceContext",
        wire: Some(Wire::OptText(|d, v| d.request.trace_context = v)),
        param: Some(Param {
            name: "trace_context",
            sql_type: "jsonb",
            value: Value::Text(|e| e.request.trace_context.as_deref()),
            stored: column("trace_context", "jsonb"),
            compared: false,
            key: false,
        }),
    },
];

/// The statement parameters, in order.
pub fn params() -> impl Iterator<Item = &'static Param> {
    FIELDS.iter().filter_map(|f| f.param.as_ref())
}

/// What a binding sends for each entry, in order: each field's name and wire kind.
pub fn wire_layout() -> impl Iterator<Item = (&'static str, &'static Wire)> {
    FIELDS
        .iter()
        .filter_map(|f| f.wire.as_ref().map(|w| (f.name, w)))
}

/// A request being read from a binding: the fields as sent, before the core makes a
/// [`JobRequest`] of them ([`Draft::finish`]).
pub struct Draft {
    pub request: JobRequest,
    /// Whether the payload is JSON to put in canonical form first.
    pub canonicalize: bool,
    /// Whether the key is the auto key of the (canonical) payload.
    pub derive_key: bool,
    /// The payload codec that encoded the payload, what it made of it and its digest.
    pub codec: Option<String>,
    pub encoded: Option<Vec<u8>>,
    pub codec_digest: Option<Vec<u8>>,
    pub run_at_micros: Option<i64>,
    pub delay_ms: Option<i64>,
    pub concurrency_limit: Option<i64>,
}

impl Default for Draft {
    fn default() -> Draft {
        Draft {
            request: JobRequest::new("", Vec::new()),
            canonicalize: false,
            derive_key: false,
            codec: None,
            encoded: None,
            codec_digest: None,
            run_at_micros: None,
            delay_ms: None,
            concurrency_limit: None,
        }
    }
}

impl Draft {
    /// The request: the payload in canonical form when asked, the encoded payload with its
    /// codec, the derived key when asked, the schedule. Validation is the request's own
    /// ([`JobRequest::validate`]).
    pub fn finish(self) -> Result<JobRequest> {
        let mut request = self.request;
        if self.canonicalize {
            if let Some(codec) = &self.codec {
                return Err(Error::InvalidArgument(format!(
                    "payload codec {codec:?} was given JSON to put in canonical form; encode the \
                     canonical payload"
                )));
            }
            request.payload = crate::canonical::canonicalize(&request.payload)?;
        }
        request.encoded = match (self.codec, self.encoded, self.codec_digest) {
            (None, None, None) => None,
            (Some(codec), Some(bytes), Some(digest)) => Some(Encoded {
                codec,
                bytes,
                digest,
            }),
            _ => {
                return Err(Error::InvalidArgument(
                    "an encoded payload needs its codec, its bytes and its digest together".into(),
                ))
            }
        };
        if self.derive_key {
            request.key = Some(recipe::auto_key(&request.task, &request.payload)?);
        }
        request.schedule = match (self.run_at_micros, self.delay_ms) {
            (Some(micros), _) => Schedule::At { micros },
            (None, Some(millis)) => Schedule::Delay { millis },
            (None, None) => Schedule::Immediate,
        };
        request.flow.concurrency_limit = self
            .concurrency_limit
            .map(|n| {
                i32::try_from(n).map_err(|_| {
                    Error::InvalidArgument(format!("concurrencyLimit {n} is out of range"))
                })
            })
            .transpose()?;
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parameters_name_their_stored_columns_once() {
        let mut names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
        let mut param_names: Vec<&str> = params().map(|p| p.name).collect();
        param_names.sort_unstable();
        param_names.dedup();
        assert_eq!(param_names.len(), params().count());
        let mut columns: Vec<&str> = params()
            .filter_map(|p| p.stored.as_ref().map(|s| s.column))
            .collect();
        columns.sort_unstable();
        columns.dedup();
        assert_eq!(
            columns.len(),
            params().filter(|p| p.stored.is_some()).count()
        );
    }

    #[test]
    fn a_draft_becomes_the_request_it_describes() {
        let mut d = Draft::default();
        d.request.task = "t".into();
        d.request.payload = br#"{"b":1,"a":2}"#.to_vec();
        d.canonicalize = true;
        d.derive_key = true;
        d.delay_ms = Some(5);
        d.concurrency_limit = Some(3);
        d.request.flow.concurrency_key = Some("k".into());
        let r = d.finish().expect("valid");
        assert_eq!(r.payload, br#"{"a":2,"b":1}"#);
        assert_eq!(
            r.key.as_deref(),
            Some(
                recipe::auto_key("t", br#"{"a":2,"b":1}"#)
                    .expect("key")
                    .as_str()
            )
        );
        assert_eq!(r.schedule, Schedule::Delay { millis: 5 });
        assert_eq!(r.flow.concurrency_limit, Some(3));
    }

    #[test]
    fn a_draft_refuses_what_does_not_go_together() {
        let codec_without_bytes = Draft {
            codec: Some("c".into()),
            ..Draft::default()
        };
        assert!(matches!(
            codec_without_bytes.finish(),
            Err(Error::InvalidArgument(_))
        ));
        let encoded_json = Draft {
            canonicalize: true,
            codec: Some("c".into()),
            encoded: Some(vec![1]),
            codec_digest: Some(vec![0; 32]),
            ..Draft::default()
        };
        assert!(matches!(
            encoded_json.finish(),
            Err(Error::InvalidArgument(_))
        ));
        let huge_limit = Draft {
            concurrency_limit: Some(i64::MAX),
            ..Draft::default()
        };
        assert!(matches!(
            huge_limit.finish(),
            Err(Error::InvalidArgument(_))
        ));
    }
}
