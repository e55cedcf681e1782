//! A dead-letter table in PostgreSQL (feature `dead-letter-postgres`).

use ::sqlx::postgres::PgPool;
use tokio::sync::{mpsc, oneshot};

use super::{DeadLetter, Record, SinkError, log_undelivered};
use crate::calendar::rfc3339;

/// A PostgreSQL table of dead letters, created if missing, with one row
/// per record (`fields` and `history` as `jsonb`).
///
/// Records are written by a task of their own, so a failing call does not
/// wait for the database: call [`flush`](Self::flush) before shutting down
/// to see every record stored. A record the database refuses (it is down,
/// say) is written to an ERROR log event with all its fields instead.
///
/// ```ignore
/// use reattempt::dead_letter::PostgresTable;
/// use reattempt::retry;
/// use std::sync::OnceLock;
///
/// static FAILURES: OnceLock<PostgresTable> = OnceLock::new();
///
/// #[retry(max = 3, dead_letter = FAILURES)]
/// async fn charge(order: u64) -> std::io::Result<()> {
///     Ok(())
/// }
///
/// # async fn run() -> Result<(), sqlx::Error> {
/// let pool = sqlx::PgPool::connect("postgres://127.0.0.1/app").await?;
/// let _ = FAILURES.set(PostgresTable::connect(pool, "dead_letters").await?);
/// charge(17).await.ok();
/// FAILURES.get().unwrap().flush().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresTable {
    queue: mpsc::UnboundedSender<Message>,
    table: String,
}

#[derive(Debug)]
enum Message {
    Record(Box<Record>),
    Flush(oneshot::Sender<()>),
}

impl PostgresTable {
    /// Creates `table` (`name` or `schema.name`) if it does not exist and
    /// starts the task that writes records to it. Must run inside a tokio
    /// runtime.
    pub async fn connect(pool: PgPool, table: &str) -> Result<PostgresTable, ::sqlx::Error> {
        if table.is_empty()
            || !table
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(::sqlx::Error::Configuration(
                format!("`{table}` is not a table name: letters, digits, `_` and `.` only").into(),
            ));
        }
        ::sqlx::query(&format!(
            "CREATE TABLE IF NOT EXISTS {table} (
                id bigserial PRIMARY KEY,
                function text NOT NULL,
                reason text NOT NULL,
                class text NOT NULL,
                code text,
                error text NOT NULL,
                attempts integer NOT NULL,
                first_attempt_at timestamptz NOT NULL,
                last_attempt_at timestamptz NOT NULL,
                elapsed_ms bigint NOT NULL,
                fields jsonb NOT NULL,
                history jsonb NOT NULL,
                recorded_at timestamptz NOT NULL DEFAULT now()
            )"
        ))
        .execute(&pool)
        .await?;
        let (queue, inbox) = mpsc::unbounded_channel();
        tokio::spawn(write(pool, table.to_owned(), inbox));
        Ok(PostgresTable {
            queue,
            table: table.to_owned(),
        })
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Waits until every record handed over so far is stored (or logged).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.queue.send(Message::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

impl DeadLetter for PostgresTable {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        self.queue
            .send(Message::Record(Box::new(record.clone())))
            .map_err(|_| "the dead-letter table's writer has stopped".into())
    }
}

async fn write(pool: PgPool, table: String, mut inbox: mpsc::UnboundedReceiver<Message>) {
    let insert = format!(
        "INSERT INTO {table} (function, reason, class, code, error, attempts, \
         first_attempt_at, last_attempt_at, elapsed_ms, fields, history) \
         VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9, $10::jsonb, $11::jsonb)"
    );
    while let Some(message) = inbox.recv().await {
        let record = match message {
            Message::Record(record) => record,
            Message::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        let stored = ::sqlx::query(&insert)
            .bind(record.function)
            .bind(record.reason.as_str())
            .bind(record.class.as_str())
            .bind(record.code.as_deref())
            .bind(&record.error)
            .bind(i32::try_from(record.attempts).unwrap_or(i32::MAX))
            .bind(rfc3339(record.first_attempt_at))
            .bind(rfc3339(record.last_attempt_at))
            .bind(i64::try_from(record.elapsed.as_millis()).unwrap_or(i64::MAX))
            .bind(record.fields_json())
            .bind(record.history_json())
            .execute(&pool)
            .await;
        if let Err(error) = stored {
            log_undelivered(&record, &error);
        }
    }
}
