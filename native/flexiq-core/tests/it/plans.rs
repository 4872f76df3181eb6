//! The plans of the statements a worker or an enqueue runs over and over stay safe whatever
//! the table's statistics say: none reads the whole jobs table or a whole index of it, and none
//! given job ids reads the running jobs through the lease index. Checked on the generic plan, which a prepared statement is
//! cached as after a few runs, from its shape (never its time).

use crate::common;

use flexiq_core::request::fields;
use flexiq_core::Client;
use serde_json::Value;
use sqlx::{Connection, Executor, PgConnection, Row};

/// Jobs in the table; of them, the first [`RUNNING`] run under a lease.
const JOBS: i64 = 20_000;
const RUNNING: i64 = 1_000;

/// The indexes whose entries are running jobs only (a lease is held exactly while a job runs).
const RUNNING_ONLY: [&str; 3] = ["jobs_leases", "jobs_claims", "jobs_concurrency"];

/// A hot statement: its file, its parameter types, and values to explain it with.
struct Statement {
    name: &'static str,
    sql: String,
    types: String,
    args: String,
    /// Names its jobs by id: must not read the lease index.
    by_id: bool,
}

macro_rules! statement {
    ($name:literal, $types:literal, $args:literal, $by_id:literal) => {
        Statement {
            name: $name,
            sql: include_str!(concat!("../../sql/", $name, ".sql")).into(),
            types: $types.into(),
            args: $args.into(),
            by_id: $by_id,
        }
    };
}

const IDS: &str = "ARRAY[1, 2, 3]::bigint[], ARRAY[1, 1, 1]";

/// A SQL literal of an entry's value of a request field, for entries equivalent to the filled
/// jobs' request (NULL for what they do not set), under the key digest given.
fn literal(field: &str, digest: &str) -> String {
    match field {
        "payload" => "'\\x7b7d'",
        "task" => "'t'",
        "queue" | "scope" => "'default'",
        "priority" => "0",
        "max_attempts" => "25",
        "retry_initial_ms" => "1000",
        "retry_max_ms" => "3600000",
        "retry_multiplier" => "2",
        "retry_jitter" => "0.1",
        "tags" => "'[]'",
        "key_digest" => digest,
        "key_preview" => "'a'",
        _ => "NULL",
    }
    .to_owned()
}

/// The request's fields as arrays, for entries under the key digests given, as the enqueue
/// statements and functions take them: their types and their values.
pub fn arrays(digests: &[&str]) -> (Vec<String>, Vec<String>) {
    fields::params()
        .map(|p| {
            let values: Vec<String> = digests.iter().map(|d| literal(p.name, d)).collect();
            (
                format!("{}[]", p.sql_type),
                format!("ARRAY[{}]::{}[]", values.join(", "), p.sql_type),
            )
        })
        .unzip()
}

/// The request's fields one value each, as `replay_one` takes them, under the key digest given.
fn scalars(digest: &str) -> (Vec<String>, Vec<String>) {
    fields::params()
        .map(|p| {
            (
                p.sql_type.to_owned(),
                format!("{}::{}", literal(p.name, digest), p.sql_type),
            )
        })
        .unzip()
}

/// `sql` with the request's fields filled in (`request::sql`).
fn expanded(sql: &str) -> String {
    flexiq_core::request::sql::expand(sql)
}

fn statements() -> Vec<Statement> {
    let (types, args) = arrays(&["'\\x01'", "'\\x02'"]);
    let (one_types, one_args) = scalars("'\\x01'");
    let mut statements = vec![
        statement!(
            "claim",
            "(text[], text[], bigint, bigint, bigint, integer[], bigint[], bigint[], text)",
            "(ARRAY['default', 'other'], ARRAY['t'], 100, 30000, 7, ARRAY[0, NULL], \
         ARRAY[1, NULL]::bigint[], ARRAY[1, NULL]::bigint[], 'host:1')",
            true
        ),
        statement!("complete_attempts", "(bigint[], integer[])", "(@ids)", true),
        statement!(
            "extend_leases",
            "(bigint[], integer[], bigint)",
            "(@ids, 30000)",
            true
        ),
        statement!("return_attempts", "(bigint[], integer[])", "(@ids)", true),
        statement!(
            "fail_attempt",
            "(bigint, integer, text)",
            "(1, 1, 'boom')",
            true
        ),
        statement!(
            "save_checkpoint",
            "(bigint, integer, text, bytea)",
            "(1, 1, 'stage', '\\x00')",
            true
        ),
        statement!("recover_claim", "(bigint, bigint)", "(7, 30000)", false),
        statement!("rescue_expired", "", "", false),
        // Maintenance's delete, every few seconds: by index jobs_finished, never all finished jobs.
        statement!(
            "prune_finished",
            "(bigint, bigint, bigint, bigint)",
            "(3600000, 3600000, 604800000, 1000)",
            false
        ),
    ];
    statements.extend([
        // Inserts the calls whose key is free; the unique index finds the held ones. (The
        // calls it leaves go to enqueue_keyed, whose statements' reads are counted below.)
        Statement {
            name: "insert_jobs",
            sql: expanded(include_str!("../../sql/insert_jobs.sql")).replace(
                "{on_conflict}",
                "ON CONFLICT (key_scope, key_digest) WHERE key_held DO NOTHING",
            ),
            types: format!("({}, boolean[])", types.join(", ")),
            args: format!("({}, ARRAY[false])", args.join(", ")),
            by_id: false,
        },
        // Looks up one key's holder, while calls keep replaying.
        Statement {
            name: "replay_one",
            sql: expanded(include_str!("../../sql/replay_one.sql")),
            types: format!("({})", one_types.join(", ")),
            args: format!("({})", one_args.join(", ")),
            by_id: false,
        },
    ]);
    statements
}

/// How the statistics came to be, each on a schema of its own.
#[derive(Debug, Clone, Copy)]
enum Stats {
    /// ANALYZE while every job waits, then some start running.
    AnalyzedWhileNothingRuns,
    /// ANALYZE while every job runs, then most go back to waiting.
    AnalyzedWhileAllRun,
    /// Never analyzed (autovacuum is off for the table).
    NeverAnalyzed,
    /// ANALYZE of the empty table, then the jobs arrive.
    AnalyzedEmptyThenFilled,
    /// ANALYZE while no job has a key, then keys arrive.
    AnalyzedBeforeAnyKey,
    /// ANALYZE of the empty table, planned before any job arrives: the plan a connection keeps
    /// when it opened on a drained queue (or an analyze of it invalidated its plans), which
    /// then serves the backlog that follows until the table is analyzed again.
    PlannedEmpty,
}

const FILL: &str = "
INSERT INTO {schema}.jobs (queue, task, payload, state, priority, run_at, max_attempts,
                           retry_initial_ms, retry_max_ms, retry_multiplier, retry_jitter, tags,
                           key_held, created_at)
SELECT 'default', 't', '\\x7b7d', 'available', 0, now(), 25, 1000, 3600000, 2, 0.1, '[]',
       false, now()
  FROM generate_series(1, $1)";

/// Gives one job in $1 a key: few enough that reading every held key may look cheap.
const KEY: &str = "
UPDATE {schema}.jobs SET key_scope = 'default', key_digest = sha256(id::text::bytea),
                         key_held = true
 WHERE id % $1 = 0";
const KEYED_ONE_IN: i64 = 200;

const START: &str = "
UPDATE {schema}.jobs SET state = 'running', attempt = 1, started_at = now(),
                         lease_expires_at = now() + interval '1 hour', claim_token = id
 WHERE id <= $1";

const STOP: &str = "
UPDATE {schema}.jobs SET state = 'available', attempt = 0, started_at = NULL,
                         lease_expires_at = NULL, claim_token = NULL
 WHERE id > $1";

/// Runs `text` with `n` bound, on the schema of `schema`.
async fn run(c: &mut PgConnection, schema: &str, text: &str, n: i64) {
    sqlx::query(&text.replace("{schema}", schema))
        .bind(n)
        .execute(c)
        .await
        .expect(text);
}

/// A session of PostgreSQL's default settings, on a table whose statistics came as `stats`
/// says.
async fn session(client: &Client, stats: Stats) -> PgConnection {
    let mut c = PgConnection::connect(&common::server().url())
        .await
        .expect("connect");
    let schema = client.schema();
    let sql = |text: &str| text.replace("{schema}", schema);
    c.execute(sql("ALTER TABLE {schema}.jobs SET (autovacuum_enabled = false)").as_str())
        .await
        .expect("autovacuum off");
    let analyze = sql("ANALYZE {schema}.jobs");
    match stats {
        Stats::AnalyzedWhileNothingRuns => {
            run(&mut c, schema, FILL, JOBS).await;
            run(&mut c, schema, KEY, KEYED_ONE_IN).await;
            c.execute(analyze.as_str()).await.expect("analyze");
            run(&mut c, schema, START, RUNNING).await;
        }
        Stats::AnalyzedWhileAllRun => {
            run(&mut c, schema, FILL, JOBS).await;
            run(&mut c, schema, KEY, KEYED_ONE_IN).await;
            run(&mut c, schema, START, JOBS).await;
            c.execute(analyze.as_str()).await.expect("analyze");
            run(&mut c, schema, STOP, RUNNING).await;
        }
        Stats::NeverAnalyzed => {
            run(&mut c, schema, FILL, JOBS).await;
            run(&mut c, schema, KEY, KEYED_ONE_IN).await;
            run(&mut c, schema, START, RUNNING).await;
        }
        Stats::AnalyzedEmptyThenFilled => {
            c.execute(analyze.as_str()).await.expect("analyze");
            run(&mut c, schema, FILL, JOBS).await;
            run(&mut c, schema, KEY, KEYED_ONE_IN).await;
            run(&mut c, schema, START, RUNNING).await;
        }
        Stats::PlannedEmpty => {
            c.execute(analyze.as_str()).await.expect("analyze");
        }
        Stats::AnalyzedBeforeAnyKey => {
            run(&mut c, schema, FILL, JOBS).await;
            c.execute(analyze.as_str()).await.expect("analyze");
            run(&mut c, schema, KEY, KEYED_ONE_IN).await;
            run(&mut c, schema, START, RUNNING).await;
        }
    }
    c
}

/// A session with the settings of FlexiQ's own connections, on a table whose statistics came
/// as `stats` says: the plan a prepared statement settles on after its first runs, whatever
/// its values.
async fn prepare(client: &Client, stats: Stats) -> PgConnection {
    let mut c = session(client, stats).await;
    c.execute("SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off")
        .await
        .expect("generic plans");
    c
}

/// A plan node: its type, relation and index, and whether it has an index condition.
type Node = (String, String, String, bool);

/// Every node of a plan.
fn nodes(plan: &Value, out: &mut Vec<Node>) {
    let field = |name: &str| plan[name].as_str().unwrap_or("").to_owned();
    out.push((
        field("Node Type"),
        field("Relation Name"),
        field("Index Name"),
        plan.get("Index Cond").is_some(),
    ));
    for child in plan["Plans"].as_array().into_iter().flatten() {
        nodes(child, out);
    }
}

/// Whether a nested loop reads jobs on its outer side and goes through given values (an
/// unnested array) again for each of them: a batch of n ids then costs n² comparisons.
fn rescans_values_per_job(plan: &Value) -> bool {
    let children: Vec<&Value> = plan["Plans"].as_array().into_iter().flatten().collect();
    // Rows of jobs the node itself passes up; a subplan's reads run apart from the loop.
    fn reads_jobs(p: &Value) -> bool {
        p["Relation Name"] == "jobs"
            || p["Plans"].as_array().into_iter().flatten().any(|c| {
                !matches!(
                    c["Parent Relationship"].as_str(),
                    Some("InitPlan" | "SubPlan")
                ) && reads_jobs(c)
            })
    }
    let values = |p: &Value| {
        p["Node Type"] == "Function Scan"
            || (p["Node Type"] == "Materialize" && p["Plans"][0]["Node Type"] == "Function Scan")
    };
    let here = plan["Node Type"] == "Nested Loop"
        && children.len() == 2
        && reads_jobs(children[0])
        && values(children[1]);
    here || children.into_iter().any(rescans_values_per_job)
}

async fn generic_plan(c: &mut PgConnection, schema: &str, s: &Statement) -> (Vec<Node>, bool) {
    let sql = expanded(&s.sql)
        .replace(
            "{held_attempts}",
            include_str!("../../sql/held_attempts.sql"),
        )
        // Completions take rescued attempts too (see worker_store::Held).
        .replace(
            "{rescued_too}",
            if s.name == "complete_attempts" {
                "true"
            } else {
                "false"
            },
        )
        .replace("{schema}", schema);
    c.execute(format!("PREPARE hot {} AS {sql}", s.types).as_str())
        .await
        .expect(s.name);
    let args = s.args.replace("@ids", IDS);
    let row = sqlx::query(&format!("EXPLAIN (FORMAT JSON) EXECUTE hot {args}"))
        .fetch_one(&mut *c)
        .await
        .expect(s.name);
    // A json column, whose binary form is its text (sqlx reads json only with a feature).
    let explained: String = row.try_get_unchecked(0).expect("the plan's text");
    c.execute("DEALLOCATE hot").await.expect("deallocate");
    let explained: Value = serde_json::from_str(&explained).expect("a JSON plan");
    let mut out = Vec::new();
    nodes(&explained[0]["Plan"], &mut out);
    (out, rescans_values_per_job(&explained[0]["Plan"]))
}

async fn plans_are_safe(stats: Stats) {
    let client = common::client().await;
    let mut c = prepare(&client, stats).await;
    let mut unsafe_plans = Vec::new();
    for s in &statements() {
        let (plan, quadratic) = generic_plan(&mut c, client.schema(), s).await;
        // An index of running jobs alone holds no more than the workers run at once; read whole
        // by a statement that does not name its jobs, it stays that small whatever the table.
        let whole_table = plan.iter().any(|(node, relation, index, cond)| {
            (node == "Seq Scan" && relation == "jobs")
                || (index.starts_with("jobs")
                    && !cond
                    && (s.by_id || !RUNNING_ONLY.contains(&index.as_str())))
        });
        let leases = s.by_id && plan.iter().any(|(_, _, index, _)| index == "jobs_leases");
        if whole_table || leases || quadratic {
            unsafe_plans.push(format!("{}: {plan:?}", s.name));
        }
    }
    assert!(
        unsafe_plans.is_empty(),
        "statistics {stats:?}: plans that read the whole table, a whole index or the leases, or \
         go through their values once per job:\n{}",
        unsafe_plans.join("\n")
    );
}

#[tokio::test]
async fn plans_are_safe_analyzed_while_nothing_runs() {
    plans_are_safe(Stats::AnalyzedWhileNothingRuns).await;
}

#[tokio::test]
async fn plans_are_safe_analyzed_while_all_run() {
    plans_are_safe(Stats::AnalyzedWhileAllRun).await;
}

#[tokio::test]
async fn plans_are_safe_never_analyzed() {
    plans_are_safe(Stats::NeverAnalyzed).await;
}

#[tokio::test]
async fn plans_are_safe_analyzed_empty_then_filled() {
    plans_are_safe(Stats::AnalyzedEmptyThenFilled).await;
}

#[tokio::test]
async fn plans_are_safe_analyzed_before_any_key() {
    plans_are_safe(Stats::AnalyzedBeforeAnyKey).await;
}

#[tokio::test]
async fn plans_are_safe_planned_on_the_empty_table() {
    plans_are_safe(Stats::PlannedEmpty).await;
}

/// Rows and index entries of the jobs table read so far, as the statistics count them.
async fn reads(c: &mut PgConnection, schema: &str) -> i64 {
    let version: i32 = sqlx::query_scalar("SELECT current_setting('server_version_num')::integer")
        .fetch_one(&mut *c)
        .await
        .expect("server version");
    if version >= 150_000 {
        // Pending counts go out when the session next goes idle, before the statements below.
        c.execute("SELECT pg_stat_force_next_flush()")
            .await
            .expect("flush");
    } else {
        // Before 15 (no pg_stat_force_next_flush), a session sends its counts to the statistics
        // collector when it goes idle at least 500 ms (PGSTAT_STAT_INTERVAL) after it last sent
        // them, and a snapshot may come from a statistics file up to 500 ms old: so send them
        // after a pause, and read only once a file written before they arrived is too old.
        let interval = std::time::Duration::from_millis(600);
        tokio::time::sleep(interval).await;
        c.execute("SELECT 1").await.expect("go idle");
        tokio::time::sleep(interval).await;
    }
    c.execute("SELECT pg_stat_clear_snapshot()")
        .await
        .expect("fresh statistics");
    sqlx::query_scalar(
        "SELECT (coalesce(seq_tup_read, 0)
                 + (SELECT coalesce(sum(i.idx_tup_read), 0)
                      FROM pg_stat_user_indexes i WHERE i.relid = t.relid))::bigint
           FROM pg_stat_user_tables t
          WHERE t.schemaname = $1 AND t.relname = 'jobs'",
    )
    .bind(schema)
    .fetch_one(c)
    .await
    .expect("reads")
}

/// The statements of `enqueue_keyed` run inside the function, out of EXPLAIN's reach, so what
/// they read is counted instead: a batch that meets a held key reads that key's holder, not
/// every held key, nor the table.
#[tokio::test]
async fn a_keyed_batch_reads_only_its_own_keys_analyzed_before_any_key() {
    let client = common::client().await;
    let schema = client.schema();
    let mut c = prepare(&client, Stats::AnalyzedBeforeAnyKey).await;
    let before = reads(&mut c, schema).await;
    // Job 200 holds the first key; the second is free.
    let created: Vec<(i64, bool)> =
        sqlx::query_as(&enqueue_keyed(schema, &["sha256('200')", "sha256('free')"]))
            .fetch_all(&mut c)
            .await
            .expect("enqueue_keyed");
    assert_eq!(
        created.iter().map(|r| r.1).collect::<Vec<_>>(),
        [false, true]
    );
    let read = reads(&mut c, schema).await - before;
    let held = JOBS / KEYED_ONE_IN;
    assert!(
        read < 20,
        "a batch of two keys read {read} rows and index entries; {held} keys are held"
    );
}

/// A call of `enqueue_keyed` with an entry under each digest given, equivalents of the filled
/// jobs' request: each entry's job, and whether the call created it.
fn enqueue_keyed(schema: &str, digests: &[&str]) -> String {
    let (_, args) = arrays(digests);
    let ranks: Vec<String> = (1..=digests.len()).map(|r| r.to_string()).collect();
    format!(
        "SELECT job_id, created FROM {schema}.enqueue_keyed({}, ARRAY[{}], false)",
        args.join(", "),
        ranks.join(", ")
    )
}

/// The statements of `enqueue_keyed` run inside the function, where PostgreSQL caches a generic
/// plan after five runs: past that, a single replay and a single fresh key each read only their
/// own key, not every held key, when the statistics predate the keys.
#[tokio::test]
async fn a_single_keyed_enqueue_reads_only_its_own_key_analyzed_before_any_key() {
    let client = common::client().await;
    let schema = client.schema();
    let mut c = prepare(&client, Stats::AnalyzedBeforeAnyKey).await;
    let call = |digest: &str| enqueue_keyed(schema, &[digest]);
    // Job 200 holds this key for an equivalent request.
    for _ in 0..8 {
        let replayed: (i64, bool) = sqlx::query_as(&call("sha256('200')"))
            .fetch_one(&mut c)
            .await
            .expect("replay");
        assert_eq!(replayed, (200, false));
    }
    for i in 0..8 {
        let placed: (i64, bool) = sqlx::query_as(&call(&format!("sha256('free-{i}')")))
            .fetch_one(&mut c)
            .await
            .expect("fresh key");
        assert!(placed.1, "a free key makes a job");
    }
    let before = reads(&mut c, schema).await;
    let _: (i64, bool) = sqlx::query_as(&call("sha256('200')"))
        .fetch_one(&mut c)
        .await
        .expect("replay");
    let _: (i64, bool) = sqlx::query_as(&call("sha256('free-last')"))
        .fetch_one(&mut c)
        .await
        .expect("fresh key");
    let read = reads(&mut c, schema).await - before;
    let held = JOBS / KEYED_ONE_IN;
    assert!(
        read < 10,
        "a replay and a fresh key read {read} rows and index entries; {held} keys are held"
    );
}

/// The announcement that follows most enqueues is PL/pgSQL, whose plan a session keeps: as a
/// SQL function reading from unnest, which PostgreSQL cannot inline, it was parsed and planned
/// on every call.
#[tokio::test]
async fn the_announcement_keeps_its_plan_between_calls() {
    let client = common::client().await;
    let language = common::scalar(
        &client,
        "SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.oid = '{schema}.announce(text[])'::regprocedure AND l.lanname = 'plpgsql'",
    )
    .await;
    assert_eq!(language, 1, "announce is PL/pgSQL");
}

/// On the application's connection, and on any other producer's, the functions that enqueue
/// run under that session's settings, which FlexiQ does not choose. A session that first
/// enqueued while the table was empty (a new deployment, a drained queue) made its plans then,
/// when reading the whole table cost nothing, and keeps them while the table fills, until the
/// table is next analyzed. So the functions carry their own setting: past those first calls, a
/// replay and a fresh key, one at a time and in a batch, read only their own keys.
#[tokio::test]
async fn keyed_enqueues_on_a_session_of_default_settings_read_only_their_keys_planned_empty() {
    let client = common::client().await;
    let schema = client.schema();
    let mut c = session(&client, Stats::PlannedEmpty).await;
    let one = |digest: &str| enqueue_keyed(schema, &[digest]);
    let batch = |first: &str, second: &str| enqueue_keyed(schema, &[first, second]);
    // Enough runs for each function's statements to settle on a cached plan, while the table
    // holds only their own jobs.
    for i in 0..8 {
        let _: (i64, bool) = sqlx::query_as(&one(&format!("sha256('early-{i}')")))
            .fetch_one(&mut c)
            .await
            .expect("early single enqueue");
        let _: Vec<(i64, bool)> = sqlx::query_as(&batch(
            &format!("sha256('early-a{i}')"),
            &format!("sha256('early-b{i}')"),
        ))
        .fetch_all(&mut c)
        .await
        .expect("early batch");
    }
    run(&mut c, schema, FILL, JOBS).await;
    run(&mut c, schema, KEY, KEYED_ONE_IN).await;
    let before = reads(&mut c, schema).await;
    // Job 200 holds this key for an equivalent request.
    let replayed: (i64, bool) = sqlx::query_as(&one("sha256('200')"))
        .fetch_one(&mut c)
        .await
        .expect("replay");
    assert_eq!(replayed, (200, false));
    let placed: (i64, bool) = sqlx::query_as(&one("sha256('late')"))
        .fetch_one(&mut c)
        .await
        .expect("fresh key");
    assert!(placed.1, "a free key makes a job");
    let created: Vec<(i64, bool)> = sqlx::query_as(&batch("sha256('400')", "sha256('late-batch')"))
        .fetch_all(&mut c)
        .await
        .expect("batch");
    assert_eq!(
        created.iter().map(|r| r.1).collect::<Vec<_>>(),
        [false, true]
    );
    let read = reads(&mut c, schema).await - before;
    let held = JOBS / KEYED_ONE_IN;
    assert!(
        read < 30,
        "two single enqueues and a batch of two read {read} rows and index entries; {held} keys \
         are held"
    );
}
