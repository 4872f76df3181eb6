//! Integration tests of what the core does within a millisecond or two, against a real
//! PostgreSQL, in a binary of their own: beside the other integration tests, a hundred of them
//! at once on a small machine, their callers come back later than anything they measure.

#[path = "../it/common/mod.rs"]
mod common;
mod grouping;
