//! `sqlx::Error` from the MariaDB server on this machine, classified by
//! MySQL error number without `on`: a real deadlock, a duplicate key and a
//! lock wait timeout.
//!
//! Needs `RETRY_TEST_MYSQL_URL` (set by `.ci/run`); skipped without it.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use common::{Codes, seen};
use reattempt::retry;
use sqlx::mysql::MySqlPool;
use tokio::sync::Barrier;

/// A pool and a table of its own, dropped at the end.
struct Db {
    pool: MySqlPool,
    table: String,
}

impl Db {
    async fn connect() -> Option<Db> {
        let pool = common::sqlx_pool("RETRY_TEST_MYSQL_URL").await?;
        let table = format!("retry_{}", common::unique());
        let db = Db { pool, table };
        db.run("CREATE TABLE {t} (id INT PRIMARY KEY, value INT NOT NULL) ENGINE = InnoDB")
            .await;
        db.run("INSERT INTO {t} (id, value) VALUES (1, 0), (2, 0)")
            .await;
        Some(db)
    }

    fn sql(&self, sql: &str) -> String {
        sql.replace("{t}", &self.table)
    }

    async fn run(&self, sql: &str) {
        sqlx::query(&self.sql(sql))
            .execute(&self.pool)
            .await
            .unwrap();
    }

    async fn drop_table(self) {
        self.run("DROP TABLE {t}").await;
        self.pool.close().await;
    }
}

/// Updates both rows, in the order given, inside one transaction.
#[retry(max = 5, backoff = fixed(20ms), jitter = full, after = |ctx| seen(codes, ctx))]
async fn update_both(
    db: &Db,
    first: i32,
    second: i32,
    barrier: &Barrier,
    attempts: &AtomicU32,
    codes: &Codes,
) -> Result<(), sqlx::Error> {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    let mut tx = db.pool.begin().await?;
    let update = db.sql("UPDATE {t} SET value = value + 1 WHERE id = ?");
    sqlx::query(&update).bind(first).execute(&mut *tx).await?;
    if attempt == 1 {
        // Each holds one row and now asks for the other's: a deadlock.
        barrier.wait().await;
    }
    sqlx::query(&update).bind(second).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(())
}

#[tokio::test]
async fn a_real_deadlock_is_retried_and_both_transactions_commit() {
    let Some(db) = Db::connect().await else {
        return;
    };
    let db = Arc::new(db);
    let barrier = Arc::new(Barrier::new(2));
    let codes = Arc::new(Codes::default());
    let run = |first, second| {
        let (db, barrier, codes) = (Arc::clone(&db), Arc::clone(&barrier), Arc::clone(&codes));
        tokio::spawn(async move {
            let attempts = AtomicU32::new(0);
            update_both(&db, first, second, &barrier, &attempts, &codes)
                .await
                .map(|()| attempts.into_inner())
        })
    };
    let (one, two) = (run(1, 2), run(2, 1));
    let attempts = one.await.unwrap().unwrap() + two.await.unwrap().unwrap();
    let codes = codes.lock().unwrap().clone();
    assert!(
        codes.iter().any(|c| c.as_deref() == Some("1213")),
        "{codes:?}"
    );
    assert_eq!(attempts, 3, "the deadlock victim ran once more: {codes:?}");
    let total: i64 = sqlx::query_scalar(&db.sql("SELECT CAST(SUM(value) AS SIGNED) FROM {t}"))
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(total, 4, "both transactions committed both updates");
    if let Ok(db) = Arc::try_unwrap(db) {
        db.drop_table().await;
    }
}

#[retry(max = 5, backoff = fixed(10ms))]
async fn insert(db: &Db, id: i32, attempts: &AtomicU32) -> Result<(), sqlx::Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    sqlx::query(&db.sql("INSERT INTO {t} (id, value) VALUES (?, 0)"))
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_duplicate_entry_is_not_retried() {
    let Some(db) = Db::connect().await else {
        return;
    };
    let attempts = AtomicU32::new(0);
    let error = insert(&db, 1, &attempts).await.unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    let mysql = error
        .as_database_error()
        .and_then(|e| e.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>())
        .unwrap();
    assert_eq!(mysql.number(), 1062);
    db.drop_table().await;
}

#[retry(max = 4, backoff = fixed(100ms), after = |ctx| seen(codes, ctx))]
async fn update_with_a_short_lock_wait(db: &Db, codes: &Codes) -> Result<(), sqlx::Error> {
    let mut conn = db.pool.acquire().await?;
    sqlx::query("SET SESSION innodb_lock_wait_timeout = 1")
        .execute(&mut *conn)
        .await?;
    sqlx::query(&db.sql("UPDATE {t} SET value = value + 1 WHERE id = 1"))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_lock_wait_timeout_is_retried_until_the_lock_is_released() {
    let Some(db) = Db::connect().await else {
        return;
    };
    // Another transaction holds row 1 for 1.5 s.
    let mut holder = db.pool.begin().await.unwrap();
    sqlx::query(&db.sql("SELECT value FROM {t} WHERE id = 1 FOR UPDATE"))
        .fetch_one(&mut *holder)
        .await
        .unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        holder.commit().await.unwrap();
    });
    let codes = Codes::default();
    update_with_a_short_lock_wait(&db, &codes).await.unwrap();
    release.await.unwrap();
    let codes = codes.into_inner().unwrap();
    assert_eq!(
        codes.first().cloned().flatten().as_deref(),
        Some("1205"),
        "{codes:?}"
    );
    assert_eq!(codes.last().unwrap(), &None, "{codes:?}");
    db.drop_table().await;
}
