//! The PostgreSQL dead-letter table when things go wrong: the runtime stops
//! with records queued, the queue fills, the database is out of reach or
//! does not answer, processes create the table at once. No record is ever
//! lost silently: it is stored, or in an ERROR event with its whole content.
//!
//! Needs `RETRY_TEST_POSTGRES_URL` (set by `.ci/run`).

mod common;
#[path = "../../tests/common/mod.rs"]
mod logs;

use std::io;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use reattempt::dead_letter::PostgresTable;
use reattempt::retry;
use serde_json::Value;
use sqlx::postgres::{PgPool, PgPoolOptions};

const URL: &str = "RETRY_TEST_POSTGRES_URL";
const UNSTORED: &str = "dead-letter sink failed; the record is here instead";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn pool(url: &str) -> PgPool {
    PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(10))
        .connect(url)
        .await
        .unwrap()
}

/// The `n` of each record that reached the logs instead of the table.
fn logged(events: &[Value]) -> Vec<u32> {
    events
        .iter()
        .filter(|e| e["fields"]["message"] == UNSTORED)
        .map(|e| {
            let fields: Value =
                serde_json::from_str(e["fields"]["fields"].as_str().unwrap()).unwrap();
            fields["n"].as_str().unwrap().parse().unwrap()
        })
        .collect()
}

/// The rows of `table` that `columns` reads, in the order of `order`; the
/// table is dropped then.
fn read_and_drop<T>(url: &str, table: &str, columns: &str, order: &str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
{
    runtime().block_on(async {
        let pool = pool(url).await;
        let rows = sqlx::query_as(&format!("SELECT {columns} FROM {table} ORDER BY {order}"))
            .fetch_all(&pool)
            .await
            .unwrap();
        sqlx::query(&format!("DROP TABLE {table}"))
            .execute(&pool)
            .await
            .unwrap();
        rows
    })
}

fn stored(url: &str, table: &str) -> Vec<u32> {
    let rows: Vec<(String,)> = read_and_drop(url, table, "fields->>'n'", "(fields->>'n')::int");
    rows.iter().map(|(n,)| n.parse().unwrap()).collect()
}

/// Every `n` below `count` exactly once, stored or logged.
fn each_once(stored: &[u32], logged: &[u32], count: u32) {
    let mut all: Vec<u32> = stored.iter().chain(logged).copied().collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..count).collect::<Vec<_>>(),
        "stored {stored:?}, logged {logged:?}"
    );
}

static AT_SHUTDOWN: OnceLock<PostgresTable> = OnceLock::new();

#[retry(max = 1, dead_letter = AT_SHUTDOWN, fields(n))]
async fn queued_at_shutdown(n: u32) -> io::Result<()> {
    Err(io::ErrorKind::PermissionDenied.into())
}

#[test]
fn records_queued_when_the_runtime_stops_are_logged_whole() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let table = format!("reattempt_shutdown_{}", common::unique());
    let (events, _) = logs::capture_logs(|| {
        let rt = runtime();
        rt.block_on(async {
            let sink = PostgresTable::connect(pool(&url).await, &table)
                .await
                .unwrap();
            AT_SHUTDOWN.set(sink).unwrap();
            // None of these calls yields, so the writer has stored none of
            // them when the runtime goes.
            for n in 0..500 {
                queued_at_shutdown(n).await.unwrap_err();
            }
        });
        drop(rt);
    });
    let logged = logged(&events);
    each_once(&stored(&url, &table), &logged, 500);
    assert!(
        logged.len() >= 499,
        "the runtime stopped first: {}",
        logged.len()
    );
}

static SMALL: OnceLock<PostgresTable> = OnceLock::new();

#[retry(max = 1, dead_letter = SMALL, fields(n))]
async fn into_a_small_queue(n: u32) -> io::Result<()> {
    Err(io::ErrorKind::PermissionDenied.into())
}

#[test]
fn a_full_queue_logs_the_records_it_cannot_hold() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let table = format!("reattempt_full_{}", common::unique());
    let (events, _) = logs::capture_logs(|| {
        runtime().block_on(async {
            let sink = PostgresTable::connect_with_capacity(pool(&url).await, &table, 10)
                .await
                .unwrap();
            SMALL.set(sink).unwrap();
            for n in 0..50 {
                into_a_small_queue(n).await.unwrap_err();
            }
            SMALL.get().unwrap().flush().await;
        });
    });
    let logged = logged(&events);
    assert_eq!(logged.len(), 40, "ten fit in the queue");
    assert!(
        events.iter().any(|e| e["fields"]["sink_error"]
            .as_str()
            .is_some_and(|s| s.contains("queue is full"))),
        "the log says why"
    );
    each_once(&stored(&url, &table), &logged, 50);
}

static UNREACHABLE: OnceLock<PostgresTable> = OnceLock::new();

#[retry(max = 1, dead_letter = UNREACHABLE, fields(n))]
async fn while_unreachable(n: u32) -> io::Result<()> {
    Err(io::ErrorKind::PermissionDenied.into())
}

#[test]
fn while_the_database_is_out_of_reach_records_do_not_each_wait_for_it() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let table = format!("reattempt_unreachable_{}", common::unique());
    let mut waited = Duration::ZERO;
    let (events, _) = logs::capture_logs(|| {
        runtime().block_on(async {
            // One connection, held by the test: every insert waits the
            // pool's acquire timeout, as when the server is gone.
            let pool = PgPoolOptions::new()
                .max_connections(1)
                .acquire_timeout(Duration::from_secs(2))
                .connect(&url)
                .await
                .unwrap();
            let sink = PostgresTable::connect(pool.clone(), &table).await.unwrap();
            UNREACHABLE.set(sink).unwrap();
            let held = pool.acquire().await.unwrap();
            let started = Instant::now();
            for n in 0..10 {
                while_unreachable(n).await.unwrap_err();
            }
            UNREACHABLE.get().unwrap().flush().await;
            waited = started.elapsed();
            drop(held);
        });
    });
    // In turn, ten records would take 20 s; after the first timeout the
    // others go to the log at once.
    assert!(
        waited < Duration::from_secs(10),
        "the records waited {waited:?}"
    );
    each_once(&stored(&url, &table), &logged(&events), 10);
}

static HUNG: OnceLock<PostgresTable> = OnceLock::new();

#[retry(max = 1, dead_letter = HUNG, fields(n))]
async fn while_the_table_is_locked(n: u32) -> io::Result<()> {
    Err(io::ErrorKind::PermissionDenied.into())
}

/// A database that takes an insert and never answers: here another session
/// holds the table's lock, as a long migration may; a network that drops
/// every packet does the same. The insert is given a bounded time, then
/// its record is logged and the database left alone for a while, so that
/// `flush` ends, as a shutdown needs, and no record waits in the queue.
#[test]
fn while_the_database_does_not_answer_a_flush_still_ends() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let table = format!("reattempt_hung_{}", common::unique());
    let mut flushed_after = Duration::MAX;
    let (events, _) = logs::capture_logs(|| {
        runtime().block_on(async {
            let sink = PostgresTable::connect(pool(&url).await, &table)
                .await
                .unwrap();
            HUNG.set(sink).unwrap();
            let locker = pool(&url).await;
            let mut lock = locker.begin().await.unwrap();
            sqlx::query(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
                .execute(&mut *lock)
                .await
                .unwrap();
            let started = Instant::now();
            for n in 0..10 {
                while_the_table_is_locked(n).await.unwrap_err();
            }
            let flushed =
                tokio::time::timeout(Duration::from_secs(30), HUNG.get().unwrap().flush()).await;
            flushed_after = started.elapsed();
            lock.rollback().await.unwrap();
            flushed.expect("the flush ended while the database did not answer");
        });
    });
    let mut logged = logged(&events);
    logged.sort_unstable();
    // The first record's insert may still be stored once the lock goes:
    // logged and stored is a duplicate, where neither would be a loss.
    assert_eq!(logged, (0..10).collect::<Vec<_>>(), "every record logged");
    // Read only to drop the table: whether the first record is in it too
    // depends on when the lock went.
    stored(&url, &table);
    assert!(
        events.iter().any(|e| e["fields"]["sink_error"]
            .as_str()
            .is_some_and(|s| s.contains("did not answer"))),
        "the log says why"
    );
    assert!(
        flushed_after < Duration::from_secs(20),
        "flushed after {flushed_after:?}"
    );
}

const CHILD_TABLE: &str = "REATTEMPT_DEAD_LETTER_TABLE";

/// What each child process does: set up the table named in its
/// environment; a no-op when run as a plain test.
#[test]
fn child_sets_up_the_table() {
    let Some(table) = std::env::var_os(CHILD_TABLE) else {
        return;
    };
    let url = std::env::var(URL).unwrap();
    runtime().block_on(async {
        PostgresTable::connect(pool(&url).await, table.to_str().unwrap())
            .await
            .unwrap();
    });
}

#[test]
fn four_processes_setting_up_one_new_table_all_succeed() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    for run in 0..5 {
        let table = format!("reattempt_setup_{}_{run}", common::unique());
        let mut children: Vec<_> = (0..4)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "child_sets_up_the_table", "--test-threads", "1"])
                    .env(CHILD_TABLE, &table)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(60);
        while children.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
            assert!(
                Instant::now() < deadline,
                "the set-up did not finish in time"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "run {run}: a set-up failed: {}",
                String::from_utf8_lossy(&output.stdout)
            );
        }
        assert!(stored(&url, &table).is_empty());
    }
}

static HOSTILE: OnceLock<PostgresTable> = OnceLock::new();

/// An error whose text, and an argument whose value, hold a NUL byte,
/// which PostgreSQL's `text` and `jsonb` refuse.
#[retry(max = 1, dead_letter = HOSTILE, fields(name))]
async fn with_a_nul_byte(name: &str) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("no access to {name}"),
    ))
}

#[test]
fn a_record_holding_nul_bytes_is_stored_with_them_escaped() {
    let Some(url) = common::server_url(URL) else {
        return;
    };
    let table = format!("reattempt_nul_{}", common::unique());
    let (events, _) = logs::capture_logs(|| {
        runtime().block_on(async {
            let sink = PostgresTable::connect(pool(&url).await, &table)
                .await
                .unwrap();
            let sink = HOSTILE.get_or_init(|| sink);
            with_a_nul_byte("a\0b").await.unwrap_err();
            sink.flush().await;
        });
    });
    assert!(
        !events.iter().any(|e| e["fields"]["message"] == UNSTORED),
        "refused by the database: {events:?}"
    );
    let rows: Vec<(String, String)> = read_and_drop(&url, &table, "error, fields->>'name'", "id");
    assert_eq!(
        rows,
        [("no access to a\\0b".to_owned(), "a\\0b".to_owned())]
    );
}
