//! Callers of single enqueues that call back to back, sent together.

use crate::common;

use std::sync::Arc;

use flexiq_core::Outcome;

/// Bursts tried before the test gives up: one that a hiccup of the machine (a checkpoint, a
/// process waking) stretches past the wait for the callers says nothing of the grouping.
const TRIES: usize = 3;

/// Four callers calling back to back fill every statement: the first caller back from a batch
/// finds the lane free and gathers the others, and the last of them back sends the batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn callers_calling_back_to_back_fill_their_statements() {
    let client = Arc::new(common::client_with_pool(8).await);
    let mut sent = Vec::new();
    for _ in 0..TRIES {
        let before = common::enqueues(&client).await;
        let created = common::burst(&client, 4, 100, |t, c| format!("back-{t}-{c}")).await;
        assert!(created.iter().all(|r| r.outcome == Outcome::Accepted));
        // 400 calls in batches of four take 100 statements; the first calls and the last may
        // go with fewer. Without the wait for the callers, 128-137 were sent.
        let statements = common::enqueues(&client).await - before;
        if statements <= 115 {
            return;
        }
        sent.push(statements);
        common::execute(&client, "DELETE FROM {schema}.jobs").await;
    }
    panic!("{sent:?} statements for 400 calls, in {TRIES} bursts");
}
