//! Enqueue throughput of the core alone (no JNI, no Java), for the Java benchmark's
//! "Rust core" column: N tokio tasks call `Client::enqueue` or `Client::enqueue_many` for S
//! seconds after a half-second warm-up, and the calls per second go to stdout.
//!
//! Usage: enqueue_rate <postgres url> <schema> <fresh|replay|unkeyed|bulk-unkeyed|bulk-keyed> <tasks> <seconds>
//!
//! The schema must be migrated. `replay` replays the keys `hot-0` … `hot-99`, which the caller
//! has enqueued with the payloads built here: any difference fails as a conflict.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flexiq_core::{recipe, Client, ClientConfig, JobRequest};

const TASK: &str = "charge_customer";
/// Jobs per `enqueue_many` call in the bulk workloads.
const BATCH: u64 = 1000;

#[derive(Clone, Copy)]
enum Workload {
    Fresh,
    Replay,
    Unkeyed,
    BulkUnkeyed,
    BulkKeyed,
}

/// The Java benchmark's payload, as FlexiQ stores it: canonical JSON of `Order`.
fn payload(amount: u64) -> Vec<u8> {
    format!("{{\"amountCents\":{amount},\"customerId\":42}}").into_bytes()
}

async fn call(client: &Client, workload: Workload, n: u64) -> flexiq_core::Result<()> {
    match workload {
        Workload::Fresh => {
            client
                .producer()
                .enqueue(&JobRequest::new(TASK, payload(n)).with_key(format!("fresh-{n}")))
                .await?;
        }
        Workload::Replay => {
            let k = n % 100;
            client
                .producer()
                .enqueue(&JobRequest::new(TASK, payload(k)).with_key(format!("hot-{k}")))
                .await?;
        }
        Workload::Unkeyed => {
            client
                .producer()
                .enqueue(&JobRequest::new(TASK, payload(n)))
                .await?;
        }
        Workload::BulkUnkeyed | Workload::BulkKeyed => {
            let mut requests = Vec::with_capacity(BATCH as usize);
            for i in n * BATCH..(n + 1) * BATCH {
                let r = JobRequest::new(TASK, payload(i));
                requests.push(match workload {
                    // The key idempotent(true) derives in the Java API, derived here by the core.
                    Workload::BulkKeyed => {
                        let key = recipe::auto_key(TASK, &r.payload)?;
                        r.with_key(key)
                    }
                    _ => r,
                });
            }
            client.producer().enqueue_many(&requests).await?;
        }
    }
    Ok(())
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: enqueue_rate <postgres url> <schema> <fresh|replay|unkeyed|bulk-unkeyed|bulk-keyed> <tasks> <seconds>"
    );
    ExitCode::from(2)
}

// Two worker threads, as the JNI library's runtime has: the same engine under both columns.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, schema, workload, tasks, seconds] = args.as_slice() else {
        return usage();
    };
    let workload = match workload.as_str() {
        "fresh" => Workload::Fresh,
        "replay" => Workload::Replay,
        "unkeyed" => Workload::Unkeyed,
        "bulk-unkeyed" => Workload::BulkUnkeyed,
        "bulk-keyed" => Workload::BulkKeyed,
        _ => return usage(),
    };
    let (Ok(tasks), Ok(seconds)) = (tasks.parse::<u32>(), seconds.parse::<f64>()) else {
        return usage();
    };
    let mut config = ClientConfig::new(url.as_str());
    config.schema = schema.clone();
    let client = match Client::connect(&config).await {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("enqueue_rate: cannot connect to {url}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let sequence = Arc::new(AtomicU64::new(0));
    let warm_end = Instant::now() + Duration::from_millis(500);
    let end = warm_end + Duration::from_secs_f64(seconds);
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (client, sequence) = (client.clone(), sequence.clone());
        handles.push(tokio::spawn(async move {
            let mut counted = 0u64;
            loop {
                let now = Instant::now();
                if now >= end {
                    return Ok::<u64, flexiq_core::Error>(counted);
                }
                call(&client, workload, sequence.fetch_add(1, Ordering::Relaxed)).await?;
                if now >= warm_end {
                    counted += 1;
                }
            }
        }));
    }
    let mut total = 0;
    for h in handles {
        match h.await {
            Ok(Ok(n)) => total += n,
            Ok(Err(e)) => {
                eprintln!("enqueue_rate: enqueue failed: {e}");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("enqueue_rate: task failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{}", total as f64 / seconds);
    ExitCode::SUCCESS
}
