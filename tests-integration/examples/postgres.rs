//! `cargo run --example postgres --features sqlx-postgres`
//!
//! A child row inserted before its parent is committed fails with a
//! foreign-key violation (23503), which `#[retry]` treats as transient: the
//! insert is retried until another task's parent row appears.
//!
//! Uses `RETRY_TEST_POSTGRES_URL`, or `postgres://postgres@127.0.0.1:5432/test`.

use std::time::Duration;

use reattempt::retry;
use sqlx::postgres::PgPool;

#[retry(max = 10, backoff = exp(base = 50ms, max = 1s), jitter)]
async fn insert_order_line(pool: &PgPool, order: i32, line: i32) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO retry_example.order_lines (id, order_id) VALUES ($1, $2)")
        .bind(line)
        .bind(order)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().json().init();
    let url = std::env::var("RETRY_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let pool = PgPool::connect(&url).await?;
    for sql in [
        "DROP SCHEMA IF EXISTS retry_example CASCADE",
        "CREATE SCHEMA retry_example",
        "CREATE TABLE retry_example.orders (id int PRIMARY KEY)",
        "CREATE TABLE retry_example.order_lines (id int PRIMARY KEY, order_id int NOT NULL REFERENCES retry_example.orders (id))",
    ] {
        sqlx::query(sql).execute(&pool).await?;
    }

    // Another task commits the order a little later.
    let writer = {
        let pool = pool.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            sqlx::query("INSERT INTO retry_example.orders (id) VALUES (1)")
                .execute(&pool)
                .await
        })
    };
    insert_order_line(&pool, 1, 10).await?;
    writer.await??;
    println!("# the order line is in, once its order was");

    sqlx::query("DROP SCHEMA retry_example CASCADE")
        .execute(&pool)
        .await?;
    Ok(())
}
