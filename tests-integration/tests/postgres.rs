//! `sqlx::Error` from the PostgreSQL server on this machine, classified
//! without `on`: each test provokes the real error and counts attempts.
//!
//! Needs `RETRY_TEST_POSTGRES_URL` (set by `.ci/run`); skipped without it.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Codes, seen};
use reattempt::retry;
use sqlx::postgres::PgPool;
use tokio::sync::{Barrier, oneshot};

/// A pool and a schema of its own, dropped at the end.
struct Db {
    pool: PgPool,
    schema: String,
}

impl Db {
    async fn connect() -> Option<Db> {
        let pool = common::sqlx_pool("RETRY_TEST_POSTGRES_URL").await?;
        let schema = format!("retry_{}", common::unique());
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&pool)
            .await
            .unwrap();
        Some(Db { pool, schema })
    }

    async fn run(&self, sql: &str) {
        let sql = sql.replace("{s}", &self.schema);
        sqlx::query(&sql).execute(&self.pool).await.unwrap();
    }

    async fn drop_schema(self) {
        self.run("DROP SCHEMA {s} CASCADE").await;
        self.pool.close().await;
    }
}

#[retry(max = 40, backoff = fixed(25ms), after = |ctx| seen(codes, ctx))]
async fn insert_child(db: &Db, codes: &Codes) -> Result<(), sqlx::Error> {
    let sql = format!(
        "INSERT INTO {}.child (id, parent_id) VALUES (1, 1)",
        db.schema
    );
    sqlx::query(&sql).execute(&db.pool).await?;
    Ok(())
}

#[tokio::test]
async fn a_child_row_is_retried_until_its_parent_appears() {
    let Some(db) = Db::connect().await else {
        return;
    };
    db.run("CREATE TABLE {s}.parent (id int PRIMARY KEY)").await;
    db.run("CREATE TABLE {s}.child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES {s}.parent (id))")
        .await;
    let parent = {
        let pool = db.pool.clone();
        let sql = format!("INSERT INTO {}.parent (id) VALUES (1)", db.schema);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            sqlx::query(&sql).execute(&pool).await.unwrap();
        })
    };
    let codes = Codes::default();
    insert_child(&db, &codes).await.unwrap();
    parent.await.unwrap();
    let codes = codes.into_inner().unwrap();
    assert!(
        codes.len() >= 2,
        "retried while the parent was missing: {codes:?}"
    );
    assert!(
        codes[..codes.len() - 1]
            .iter()
            .all(|c| c.as_deref() == Some("23503")),
        "{codes:?}"
    );
    assert_eq!(codes.last().unwrap(), &None, "the last attempt succeeded");
    db.drop_schema().await;
}

#[retry(max = 5, backoff = fixed(10ms))]
async fn insert_parent(db: &Db, id: i32, attempts: &AtomicU32) -> Result<(), sqlx::Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let sql = format!("INSERT INTO {}.parent (id) VALUES ($1)", db.schema);
    sqlx::query(&sql).bind(id).execute(&db.pool).await?;
    Ok(())
}

#[tokio::test]
async fn a_duplicate_key_fails_after_exactly_one_attempt() {
    let Some(db) = Db::connect().await else {
        return;
    };
    db.run("CREATE TABLE {s}.parent (id int PRIMARY KEY)").await;
    let attempts = AtomicU32::new(0);
    insert_parent(&db, 7, &attempts).await.unwrap();
    let attempts = AtomicU32::new(0);
    let error = insert_parent(&db, 7, &attempts).await.unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    let code = error.as_database_error().and_then(|e| e.code()).unwrap();
    assert_eq!(code, "23505");
    db.drop_schema().await;
}

/// Terminates, `after` it is told, the backend whose pid it is told.
fn terminate_when_told(
    db: &Db,
    pid: oneshot::Receiver<i32>,
    after: Duration,
) -> tokio::task::JoinHandle<()> {
    let pool = db.pool.clone();
    tokio::spawn(async move {
        let pid = pid.await.unwrap();
        tokio::time::sleep(after).await;
        let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(killed);
    })
}

/// A query whose first attempt tells `killer` its backend and sleeps, to be
/// terminated by `pg_terminate_backend` meanwhile.
async fn long_query_body(
    pool: &PgPool,
    attempts: &AtomicU32,
    killer: &Mutex<Option<oneshot::Sender<i32>>>,
) -> Result<i32, sqlx::Error> {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    let mut conn = pool.acquire().await?;
    if attempt == 1 {
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *conn)
            .await?;
        if let Some(tell) = killer.lock().unwrap().take() {
            let _ = tell.send(pid);
        }
        sqlx::query("SELECT pg_sleep(30)")
            .execute(&mut *conn)
            .await?;
    }
    sqlx::query_scalar("SELECT 42").fetch_one(&mut *conn).await
}

#[retry(max = 3, backoff = fixed(50ms))]
async fn long_query(
    pool: &PgPool,
    attempts: &AtomicU32,
    killer: &Mutex<Option<oneshot::Sender<i32>>>,
) -> Result<i32, sqlx::Error> {
    long_query_body(pool, attempts, killer).await
}

/// The same, for an operation that must not happen twice.
#[retry(max = 3, backoff = fixed(50ms), idempotent = false)]
async fn long_query_once(
    pool: &PgPool,
    attempts: &AtomicU32,
    killer: &Mutex<Option<oneshot::Sender<i32>>>,
) -> Result<i32, sqlx::Error> {
    long_query_body(pool, attempts, killer).await
}

/// Runs `long_query` (or `long_query_once`) with its first attempt's
/// session terminated mid-statement; the result and the attempts made.
async fn with_the_first_session_killed(
    db: &Db,
    idempotent: bool,
) -> (Result<i32, sqlx::Error>, u32) {
    let (tell, pid) = oneshot::channel();
    // Let the victim's pg_sleep start.
    let killer = terminate_when_told(db, pid, Duration::from_millis(200));
    let attempts = AtomicU32::new(0);
    let killer_slot = Mutex::new(Some(tell));
    let result = if idempotent {
        long_query(&db.pool, &attempts, &killer_slot).await
    } else {
        long_query_once(&db.pool, &attempts, &killer_slot).await
    };
    killer.await.unwrap();
    (result, attempts.into_inner())
}

#[tokio::test]
async fn a_session_killed_mid_call_is_retried_on_a_fresh_connection() {
    let Some(db) = Db::connect().await else {
        return;
    };
    let (result, attempts) = with_the_first_session_killed(&db, true).await;
    assert_eq!(result.unwrap(), 42);
    assert_eq!(attempts, 2);
    db.drop_schema().await;
}

#[tokio::test]
async fn a_session_killed_mid_statement_is_not_retried_when_it_must_not_run_twice() {
    let Some(db) = Db::connect().await else {
        return;
    };
    let (result, attempts) = with_the_first_session_killed(&db, false).await;
    let error = result.unwrap_err();
    assert_eq!(attempts, 1, "it may have taken effect: {error}");
    db.drop_schema().await;
}

/// A payment whose COMMIT is slow: a deferred trigger sleeps as the
/// transaction commits, and the first attempt's session is terminated
/// then, so that nobody can tell whether the COMMIT took effect.
#[retry(max = 3, backoff = fixed(50ms), idempotent = false)]
async fn pay_once(
    db: &Db,
    attempts: &AtomicU32,
    killer: &Mutex<Option<oneshot::Sender<i32>>>,
) -> Result<(), sqlx::Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let mut tx = db.pool.begin().await?;
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *tx)
        .await?;
    sqlx::query(&format!(
        "INSERT INTO {}.payments (id) VALUES (1)",
        db.schema
    ))
    .execute(&mut *tx)
    .await?;
    if let Some(tell) = killer.lock().unwrap().take() {
        let _ = tell.send(pid);
    }
    tx.commit().await
}

#[tokio::test]
async fn a_commit_interrupted_by_pg_terminate_backend_is_not_retried_when_it_must_not_run_twice() {
    let Some(db) = Db::connect().await else {
        return;
    };
    db.run("CREATE TABLE {s}.payments (id int PRIMARY KEY)")
        .await;
    db.run(
        "CREATE FUNCTION {s}.slow_commit() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$",
    )
    .await;
    db.run(
        "CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON {s}.payments \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {s}.slow_commit()",
    )
    .await;
    let (tell, pid) = oneshot::channel();
    // Let the COMMIT reach the trigger's sleep.
    let killer = terminate_when_told(&db, pid, Duration::from_millis(300));
    let attempts = AtomicU32::new(0);
    let error = tokio::time::timeout(
        Duration::from_secs(20),
        pay_once(&db, &attempts, &Mutex::new(Some(tell))),
    )
    .await
    .expect("the COMMIT was cut")
    .unwrap_err();
    killer.await.unwrap();
    assert_eq!(attempts.load(Ordering::SeqCst), 1, "not retried: {error}");
    db.drop_schema().await;
}

#[retry(max = 5, backoff = fixed(20ms), jitter = full, after = |ctx| seen(codes, ctx))]
async fn book(
    db: &Db,
    id: i32,
    barrier: &Barrier,
    attempts: &AtomicU32,
    codes: &Codes,
) -> Result<(), sqlx::Error> {
    book_body(db, id, barrier, attempts).await
}

/// The same booking, as an operation that must not happen twice: a
/// serialization failure rolled it back, so it is still retried.
#[retry(max = 5, backoff = fixed(20ms), jitter = full, idempotent = false, after = |ctx| seen(codes, ctx))]
async fn book_once(
    db: &Db,
    id: i32,
    barrier: &Barrier,
    attempts: &AtomicU32,
    codes: &Codes,
) -> Result<(), sqlx::Error> {
    book_body(db, id, barrier, attempts).await
}

async fn book_body(
    db: &Db,
    id: i32,
    barrier: &Barrier,
    attempts: &AtomicU32,
) -> Result<(), sqlx::Error> {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    let mut tx = db.pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        .execute(&mut *tx)
        .await?;
    let sql = format!("SELECT count(*) FROM {}.bookings WHERE room = 1", db.schema);
    let booked: i64 = sqlx::query_scalar(&sql).fetch_one(&mut *tx).await?;
    if attempt == 1 {
        // Both transactions have read before either writes: write skew.
        barrier.wait().await;
    }
    let sql = format!(
        "INSERT INTO {}.bookings (id, room, seen) VALUES ($1, 1, $2)",
        db.schema
    );
    sqlx::query(&sql)
        .bind(id)
        .bind(booked)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

#[tokio::test]
async fn a_serialization_failure_between_two_serializable_transactions_is_retried() {
    booking_race(true).await;
}

#[tokio::test]
async fn a_serialization_failure_is_retried_even_when_the_booking_must_not_run_twice() {
    booking_race(false).await;
}

/// Two serializable transactions that read, then write (write skew): one
/// gets 40001 and is retried, and both commit.
async fn booking_race(idempotent: bool) {
    let Some(db) = Db::connect().await else {
        return;
    };
    db.run(
        "CREATE TABLE {s}.bookings (id int PRIMARY KEY, room int NOT NULL, seen bigint NOT NULL)",
    )
    .await;
    let db = Arc::new(db);
    let barrier = Arc::new(Barrier::new(2));
    let codes = Arc::new(Codes::default());
    let run = |id| {
        let (db, barrier, codes) = (Arc::clone(&db), Arc::clone(&barrier), Arc::clone(&codes));
        tokio::spawn(async move {
            let attempts = AtomicU32::new(0);
            let booked = if idempotent {
                book(&db, id, &barrier, &attempts, &codes).await
            } else {
                book_once(&db, id, &barrier, &attempts, &codes).await
            };
            booked.map(|()| attempts.into_inner())
        })
    };
    let (first, second) = (run(1), run(2));
    let attempts = first.await.unwrap().unwrap() + second.await.unwrap().unwrap();
    let codes = codes.lock().unwrap().clone();
    assert!(attempts >= 3, "one of them was retried: {codes:?}");
    assert!(
        codes.iter().any(|c| c.as_deref() == Some("40001")),
        "{codes:?}"
    );
    let sql = format!("SELECT count(*) FROM {}.bookings", db.schema);
    let rows: i64 = sqlx::query_scalar(&sql).fetch_one(&db.pool).await.unwrap();
    assert_eq!(rows, 2, "both committed");
    if let Ok(db) = Arc::try_unwrap(db) {
        db.drop_schema().await;
    }
}

#[retry(max = 3, backoff = fixed(10ms))]
async fn through_tokio_postgres(
    client: &tokio_postgres::Client,
    attempts: &AtomicU32,
) -> Result<i32, tokio_postgres::Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let row = client.query_one("SELECT 1 / 0", &[]).await?;
    Ok(row.get(0))
}

#[tokio::test]
async fn tokio_postgres_errors_are_classified_by_sqlstate() {
    let Some(url) = common::server_url("RETRY_TEST_POSTGRES_URL") else {
        return;
    };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let attempts = AtomicU32::new(0);
    let error = through_tokio_postgres(&client, &attempts)
        .await
        .unwrap_err();
    assert_eq!(error.code().map(|c| c.code()), Some("22012"));
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        1,
        "division by zero is a validation error"
    );
    drop(client);
    connection.await.unwrap().unwrap();
}

mod dead_letter_table {
    use super::*;
    use reattempt::dead_letter::PostgresTable;
    use std::sync::OnceLock;

    static SINK: OnceLock<PostgresTable> = OnceLock::new();

    #[retry(max = 2, backoff = none, dead_letter = SINK, fields(job))]
    async fn job(job: u32) -> std::io::Result<()> {
        tokio::task::yield_now().await;
        Err(std::io::ErrorKind::ConnectionReset.into())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_from_concurrent_callers_all_arrive() {
        let Some(db) = Db::connect().await else {
            return;
        };
        let table = format!("{}.dead_letters", db.schema);
        let sink = PostgresTable::connect(db.pool.clone(), &table)
            .await
            .unwrap();
        SINK.set(sink).unwrap();
        let calls: Vec<_> = (0..20).map(|n| tokio::spawn(job(n))).collect();
        for call in calls {
            call.await.unwrap().unwrap_err();
        }
        SINK.get().unwrap().flush().await;
        let rows: Vec<(String, String, i32, String)> = sqlx::query_as(&format!(
            "SELECT function, reason, attempts, fields->>'job' FROM {table} ORDER BY (fields->>'job')::int"
        ))
        .fetch_all(&db.pool)
        .await
        .unwrap();
        assert_eq!(rows.len(), 20);
        for (n, (function, reason, attempts, job)) in rows.into_iter().enumerate() {
            assert_eq!(function, "postgres::dead_letter_table::job");
            assert_eq!((reason.as_str(), attempts), ("exhausted", 2));
            assert_eq!(job, n.to_string());
        }
        let history: String =
            sqlx::query_scalar(&format!("SELECT history::text FROM {table} LIMIT 1"))
                .fetch_one(&db.pool)
                .await
                .unwrap();
        assert!(
            history.contains(r#""delay_from": "backoff""#)
                || history.contains(r#""delay_from": "cap""#),
            "{history}"
        );
        db.drop_schema().await;
    }

    static KEYED: OnceLock<PostgresTable> = OnceLock::new();

    #[retry(max = 2, backoff = none, idempotent = key, dead_letter = KEYED)]
    async fn keyed(sent: &Mutex<Vec<String>>) -> std::io::Result<()> {
        let key = reattempt::attempt().unwrap().call_id().idempotency_key();
        sent.lock().unwrap().push(key);
        Err(std::io::ErrorKind::ConnectionReset.into())
    }

    /// A table an earlier version made, without the columns added since,
    /// gets them; the key a call sent is stored with its record.
    #[tokio::test]
    async fn a_table_of_an_earlier_version_gets_the_idempotency_key_column() {
        let Some(db) = Db::connect().await else {
            return;
        };
        db.run(
            "CREATE TABLE {s}.dead_letters (
                id bigserial PRIMARY KEY, function text NOT NULL, reason text NOT NULL,
                class text NOT NULL, code text, error text NOT NULL, attempts integer NOT NULL,
                first_attempt_at timestamptz NOT NULL, last_attempt_at timestamptz NOT NULL,
                elapsed_ms bigint NOT NULL, fields jsonb NOT NULL, history jsonb NOT NULL,
                recorded_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await;
        let table = format!("{}.dead_letters", db.schema);
        KEYED
            .set(
                PostgresTable::connect(db.pool.clone(), &table)
                    .await
                    .unwrap(),
            )
            .unwrap();
        let sent = Mutex::new(Vec::new());
        keyed(&sent).await.unwrap_err();
        KEYED.get().unwrap().flush().await;
        let stored: (String, Option<String>) =
            sqlx::query_as(&format!("SELECT call_id, idempotency_key FROM {table}"))
                .fetch_one(&db.pool)
                .await
                .unwrap();
        let sent = sent.into_inner().unwrap();
        assert_eq!(stored.1.as_ref(), Some(&sent[0]));
        assert_eq!(
            format!("\"{}\"", stored.0),
            sent[0],
            "the key is the call id"
        );
        db.drop_schema().await;
    }

    static GONE: OnceLock<PostgresTable> = OnceLock::new();

    #[retry(max = 1, dead_letter = GONE, fields(account))]
    async fn charge(account: u32) -> std::io::Result<()> {
        Err(std::io::ErrorKind::PermissionDenied.into())
    }

    #[tokio::test]
    async fn a_record_the_database_refuses_goes_to_the_logs() {
        let Some(db) = Db::connect().await else {
            return;
        };
        let table = format!("{}.dead_letters", db.schema);
        GONE.set(
            PostgresTable::connect(db.pool.clone(), &table)
                .await
                .unwrap(),
        )
        .unwrap();
        db.run("DROP TABLE {s}.dead_letters").await;

        let captured = Arc::new(Mutex::new(Vec::<u8>::new()));
        let writer = Arc::clone(&captured);
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_writer(move || Buffer(Arc::clone(&writer)))
            .finish();
        crate::common::one_interest_per_thread();
        let _guard = tracing::subscriber::set_default(subscriber);
        let error = charge(99).await.unwrap_err();
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::PermissionDenied,
            "the caller's own error"
        );
        GONE.get().unwrap().flush().await;
        let text = String::from_utf8(captured.lock().unwrap().clone()).unwrap();
        let logged = text
            .lines()
            .find(|line| line.contains("dead-letter sink failed"))
            .unwrap_or_else(|| panic!("the record is in the logs: {text}"));
        assert!(
            logged.contains(r#""fields":"{\"account\":\"99\"}""#),
            "{logged}"
        );
        assert!(logged.contains(r#""reason":"permanent""#), "{logged}");
        assert!(logged.contains("does not exist"), "{logged}");
        db.drop_schema().await;
    }

    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
