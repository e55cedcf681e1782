//! A dead-letter table in PostgreSQL (feature `dead-letter-postgres`).

use std::time::{Duration, Instant};

use ::sqlx::postgres::PgPool;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};

use super::{DeadLetter, Record, SinkError, log_undelivered};
use crate::calendar::rfc3339;
use crate::class::Class;
use crate::classify::Classified;

/// A PostgreSQL table of dead letters, created if missing, with one row
/// per record (`fields` and `history` as `jsonb`). A NUL character, which
/// PostgreSQL's text cannot hold, is stored as `\0`.
///
/// Records are written by a task of their own, so a failing call does not
/// wait for the database: call [`flush`](Self::flush) before shutting down
/// to see every record stored. No record is lost silently: each one that
/// is not stored is written to an ERROR log event with all its fields
/// instead. That is the case of a record
///
/// - the database refuses;
/// - whose insert the database has not answered within five seconds (a
///   lock held by another session, a network that drops every packet):
///   the record is also stored should the database finish the insert later,
///   a duplicate rather than a loss;
/// - that arrives while the database is unreachable: after a failure to
///   reach it, or an insert it did not answer, records go straight to the
///   log for five seconds, then the database is tried again, so records do
///   not each wait out the pool's acquire timeout, or the insert's, in turn;
/// - that finds the queue full: it holds at most [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY)
///   records (or the capacity given to
///   [`connect_with_capacity`](Self::connect_with_capacity));
/// - still queued when the runtime shuts down without a `flush`.
///
/// The table is created under a PostgreSQL advisory lock, so that instances
/// starting together do not race to create it.
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
    queue: mpsc::Sender<Message>,
    capacity: usize,
    table: String,
}

/// How long an insert may wait for the database before its record is
/// logged instead.
const INSERT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long records go straight to the log after the database could not
/// be reached.
const UNREACHABLE_PAUSE: Duration = Duration::from_secs(5);

#[derive(Debug)]
enum Message {
    Record(Box<Record>),
    Flush(oneshot::Sender<()>),
}

impl PostgresTable {
    /// The records a table queues at most before it logs them instead.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// Creates `table` (`name` or `schema.name`) if it does not exist and
    /// starts the task that writes records to it, queueing at most
    /// [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) records. Must run inside a tokio runtime.
    pub async fn connect(pool: PgPool, table: &str) -> Result<PostgresTable, ::sqlx::Error> {
        PostgresTable::connect_with_capacity(pool, table, PostgresTable::DEFAULT_CAPACITY).await
    }

    /// [`connect`](Self::connect), queueing at most `capacity` records (at
    /// least 1).
    pub async fn connect_with_capacity(
        pool: PgPool,
        table: &str,
        capacity: usize,
    ) -> Result<PostgresTable, ::sqlx::Error> {
        if table.is_empty()
            || !table
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(::sqlx::Error::Configuration(
                format!("`{table}` is not a table name: letters, digits, `_` and `.` only").into(),
            ));
        }
        // `CREATE TABLE IF NOT EXISTS` is not safe against itself: two
        // sessions creating the same table at once can both pass the check,
        // and one fails on the catalog's unique index. The lock serialises
        // them; it is released with the transaction.
        let mut setup = pool.begin().await?;
        ::sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("reattempt dead letters {table}"))
            .execute(&mut *setup)
            .await?;
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
                recorded_at timestamptz NOT NULL DEFAULT now(),
                call_id text,
                host text,
                pid integer,
                idempotency_key text
            )"
        ))
        .execute(&mut *setup)
        .await?;
        // A table made by an earlier version lacks the columns added since.
        ::sqlx::query(&format!(
            "ALTER TABLE {table} ADD COLUMN IF NOT EXISTS call_id text, \
             ADD COLUMN IF NOT EXISTS host text, ADD COLUMN IF NOT EXISTS pid integer, \
             ADD COLUMN IF NOT EXISTS idempotency_key text"
        ))
        .execute(&mut *setup)
        .await?;
        setup.commit().await?;
        let capacity = capacity.max(1);
        let (queue, inbox) = mpsc::channel(capacity);
        let writer = Writer {
            inbox,
            current: None,
        };
        tokio::spawn(write(pool, table.to_owned(), writer));
        Ok(PostgresTable {
            queue,
            capacity,
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
        if self.queue.send(Message::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

impl DeadLetter for PostgresTable {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        match self
            .queue
            .try_send(Message::Record(Box::new(record.clone())))
        {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(format!(
                "the dead-letter table's queue is full ({} records waiting for the database)",
                self.capacity
            )
            .into()),
            Err(TrySendError::Closed(_)) => {
                Err("the dead-letter table's writer has stopped (its runtime shut down)".into())
            }
        }
    }
}

/// The writer task's state. Dropped with its runtime, it logs every record
/// it still holds, so that none is lost silently.
struct Writer {
    inbox: mpsc::Receiver<Message>,
    /// The record being stored, until the database has answered.
    current: Option<Box<Record>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        let stopped: SinkError =
            "the runtime shut down before the dead-letter table stored the record".into();
        if let Some(record) = self.current.take() {
            log_undelivered(&record, &*stopped);
        }
        self.inbox.close();
        while let Ok(message) = self.inbox.try_recv() {
            if let Message::Record(record) = message {
                log_undelivered(&record, &*stopped);
            }
        }
    }
}

/// The record with each NUL character of its text written as `\0`:
/// PostgreSQL's `text` and `jsonb` hold none, and would refuse the record.
fn escape_nul(record: &Record) -> std::borrow::Cow<'_, Record> {
    let has_nul = |text: &str| text.contains('\0');
    let code_has_nul = |code: &Option<String>| code.as_deref().is_some_and(has_nul);
    if !has_nul(&record.error)
        && !code_has_nul(&record.code)
        && !record.fields.iter().any(|(_, value)| has_nul(value))
        && !record
            .history
            .iter()
            .any(|attempt| code_has_nul(&attempt.code))
    {
        return std::borrow::Cow::Borrowed(record);
    }
    let escape = |text: &mut String| *text = text.replace('\0', "\\0");
    let mut clean = record.clone();
    escape(&mut clean.error);
    let codes = clean.history.iter_mut().map(|attempt| &mut attempt.code);
    for code in codes.chain([&mut clean.code]).flatten() {
        escape(code);
    }
    for (_, value) in &mut clean.fields {
        escape(value);
    }
    std::borrow::Cow::Owned(clean)
}

async fn write(pool: PgPool, table: String, mut writer: Writer) {
    let insert = format!(
        "INSERT INTO {table} (function, reason, class, code, error, attempts, \
         first_attempt_at, last_attempt_at, elapsed_ms, fields, history, call_id, host, pid, \
         idempotency_key) \
         VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9, $10::jsonb, $11::jsonb, \
         $12, $13, $14, $15)"
    );
    let mut unreachable_until: Option<Instant> = None;
    while let Some(message) = writer.inbox.recv().await {
        let record = match message {
            Message::Record(record) => record,
            Message::Flush(done) => {
                let _ = done.send(());
                continue;
            }
        };
        if unreachable_until.is_some_and(|until| Instant::now() < until) {
            let unreachable: SinkError =
                "the dead-letter database was unreachable moments ago; it is tried again shortly"
                    .into();
            log_undelivered(&record, &*unreachable);
            continue;
        }
        let record = &**writer.current.insert(record);
        let record = &*escape_nul(record);
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
            .bind(record.call_id.to_string())
            .bind(record.host)
            .bind(i32::try_from(record.pid).unwrap_or(i32::MAX))
            .bind(record.idempotency_key.as_deref())
            .execute(&pool);
        match tokio::time::timeout(INSERT_TIMEOUT, stored).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                // A transient error (a pool timeout, a lost connection) says
                // the database is out of reach, not that this record is wrong.
                if error.classification().class() == Class::Transient {
                    unreachable_until = Some(Instant::now() + UNREACHABLE_PAUSE);
                }
                log_undelivered(record, &error);
            }
            Err(_) => {
                // Left waiting, the insert would hold every record behind it,
                // and a flush at shutdown, for as long as the database is
                // silent.
                unreachable_until = Some(Instant::now() + UNREACHABLE_PAUSE);
                let silent: SinkError = format!(
                    "the dead-letter database did not answer within {} s; \
                     the record may still be stored should it answer later",
                    INSERT_TIMEOUT.as_secs()
                )
                .into();
                log_undelivered(record, &*silent);
            }
        }
        writer.current = None;
    }
}
