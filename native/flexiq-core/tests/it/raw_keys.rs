//! The raw key never reaches PostgreSQL: not its tables, not its log.

use crate::common;

use flexiq_core::JobRequest;

#[tokio::test]
async fn no_table_and_no_log_line_holds_a_raw_key() {
    let client = common::client().await;
    let raw_keys = [
        "zebra-quartz-7731-secret",
        "octopus-violet-9920-secret",
        "auto:feedfacecafebeef1234",
    ];
    for (i, key) in raw_keys.iter().enumerate() {
        let mut r = JobRequest::new("audit", format!("{{\"n\":{i}}}").into_bytes()).with_key(*key);
        r.key_retention_ms = Some(60_000);
        client.producer().enqueue(&r).await.expect("enqueue");
        client.producer().enqueue(&r).await.expect("replay");
    }
    let mut changed = JobRequest::new("audit", b"{\"n\":99}".to_vec()).with_key(raw_keys[0]);
    changed.key_retention_ms = Some(60_000);
    let err = client
        .producer()
        .enqueue(&changed)
        .await
        .expect_err("conflict")
        .to_string();
    assert!(raw_keys.iter().all(|k| !err.contains(k)), "{err}");
    // Looking a job up by its key sends the digest.
    for key in raw_keys {
        let found = client
            .operations()
            .find_by_key("default", key)
            .await
            .expect("find");
        assert!(found.is_some(), "{key}");
    }

    let pool = sqlx::PgPool::connect(&common::server().url())
        .await
        .expect("pool");
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1",
    )
    .bind(client.schema())
    .fetch_all(&pool)
    .await
    .expect("tables");
    assert!(tables.contains(&"jobs".to_string()), "{tables:?}");
    for table in tables {
        // Every column of every row, as text; bytea columns also decoded as UTF-8 where they can be.
        let rows: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT t::text || ' ' || coalesce((SELECT string_agg(convert_from(v, 'UTF8'), ' ')
                 FROM (SELECT (jsonb_each_text(to_jsonb(t))).value) kv(x)
                 CROSS JOIN LATERAL (SELECT CASE WHEN x LIKE '\\x%' THEN decode(substr(x, 3), 'hex') END) d(v)
                 WHERE v IS NOT NULL), '')
               FROM {}.{} t",
            client.schema(),
            table
        ))
        .fetch_all(&pool)
        .await
        .expect("rows");
        for row in rows {
            for key in raw_keys {
                assert!(!row.contains(key), "{table} holds {key}: {row}");
            }
        }
    }
    let log = std::fs::read_to_string(common::server().log_file()).expect("server log");
    assert!(log.contains("enqueue_keyed"), "the log records statements");
    assert!(
        log.contains("0 AS rank"),
        "and lookups by key (find_by_key.sql)"
    );
    for key in raw_keys {
        assert!(!log.contains(key), "server log holds {key}");
    }
}
