//! `cargo run --example mariadb --features sqlx-mysql`
//!
//! Two transactions update the same two rows in opposite orders: InnoDB
//! picks one as a deadlock victim (error 1213), and `#[retry]` runs the
//! victim's whole transaction again.
//!
//! Uses `RETRY_TEST_MYSQL_URL`, or `mysql://root@127.0.0.1:3306/test`.

use std::sync::Arc;

use reattempt::retry;
use sqlx::mysql::MySqlPool;
use tokio::sync::Barrier;

#[retry(max = 5, backoff = fixed(20ms), jitter = full)]
async fn transfer(
    pool: &MySqlPool,
    from: i32,
    to: i32,
    barrier: &Barrier,
) -> Result<(), sqlx::Error> {
    let attempt = reattempt::attempt().map_or(1, |a| a.number());
    let mut tx = pool.begin().await?;
    sqlx::query("UPDATE retry_accounts SET balance = balance - 10 WHERE id = ?")
        .bind(from)
        .execute(&mut *tx)
        .await?;
    if attempt == 1 {
        barrier.wait().await;
    }
    sqlx::query("UPDATE retry_accounts SET balance = balance + 10 WHERE id = ?")
        .bind(to)
        .execute(&mut *tx)
        .await?;
    tx.commit().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().init();
    let url = std::env::var("RETRY_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned());
    let pool = MySqlPool::connect(&url).await?;
    for sql in [
        "DROP TABLE IF EXISTS retry_accounts",
        "CREATE TABLE retry_accounts (id INT PRIMARY KEY, balance INT NOT NULL) ENGINE = InnoDB",
        "INSERT INTO retry_accounts VALUES (1, 100), (2, 100)",
    ] {
        sqlx::query(sql).execute(&pool).await?;
    }
    let barrier = Arc::new(Barrier::new(2));
    let (one, two) = tokio::join!(
        transfer(&pool, 1, 2, &barrier),
        transfer(&pool, 2, 1, &barrier)
    );
    one?;
    two?;
    let total: i64 = sqlx::query_scalar("SELECT CAST(SUM(balance) AS SIGNED) FROM retry_accounts")
        .fetch_one(&pool)
        .await?;
    println!("# both transfers committed; the total is still {total}");
    sqlx::query("DROP TABLE retry_accounts")
        .execute(&pool)
        .await?;
    Ok(())
}
