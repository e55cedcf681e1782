//! Where failures go for review: every call that ends in failure for good
//! (attempts exhausted, deadline reached, a logical or validation error,
//! the budget spent) is recorded in the `dead_letter = ...` sink.
//!
//! A [`Record`] holds the function's name, why it gave up, the last error
//! with its class and code, the number of attempts and their history, when
//! the first and last ran, and the arguments named in `fields(..)`; never
//! the other arguments.
//!
//! Sinks: [`JsonLines`], a file with one JSON record per line (the embedded
//! default); [`Memory`], for tests; and with the `dead-letter-postgres`
#![cfg_attr(feature = "dead-letter-postgres", doc = "feature [`PostgresTable`].")]
// Without the feature the table is not there to link to.
#![cfg_attr(
    not(feature = "dead-letter-postgres"),
    doc = "feature `PostgresTable`."
)]
//! A sink that fails never loses the record silently and never replaces
//! the caller's error: the record is written to an ERROR log event
//! instead, with the sink's error.

#[cfg(feature = "dead-letter-postgres")]
mod postgres;

#[cfg(feature = "dead-letter-postgres")]
pub use postgres::PostgresTable;

use core::fmt::{self, Write as _};
use core::time::Duration;
use std::error::Error;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

use crate::calendar::rfc3339;
use crate::call_id::CallId;
use crate::class::Class;
use crate::give_up::GiveUp;

/// One call that failed for good.
///
/// ```
/// use reattempt::dead_letter::Memory;
/// use reattempt::{Class, retry};
///
/// static FAILED: Memory = Memory::new();
///
/// #[retry(max = 2, backoff = none, dead_letter = FAILED, name = "billing::export")]
/// fn export() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::ConnectionReset.into())
/// }
///
/// export().unwrap_err();
/// let record = &FAILED.take()[0];
/// assert_eq!((record.function, record.class), ("billing::export", Class::Transient));
/// assert_eq!(record.history.len(), 2, "one entry per failed attempt");
/// assert!(record.to_json().contains(r#""reason":"exhausted""#));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Record {
    /// The function's name, as in the logs.
    pub function: &'static str,
    /// The call's id, as in its log events and its hooks' context.
    pub call_id: CallId,
    /// The key the call sent for the server to deduplicate it, for a
    /// function with `idempotent = key`.
    pub idempotency_key: Option<String>,
    /// The host the call ran on (its host name, or `"unknown"`).
    pub host: &'static str,
    /// The id of the process the call ran in.
    pub pid: u32,
    /// Why the call gave up.
    pub reason: GiveUp,
    /// The class of the last failure.
    pub class: Class,
    /// The code of the last failure, when the classifier knew it.
    pub code: Option<String>,
    /// The last error (or failed value), as the logs write it.
    pub error: String,
    /// Attempts made.
    pub attempts: u32,
    /// When the first attempt started: a call with a sink reads its clock
    /// as it starts.
    pub first_attempt_at: SystemTime,
    /// When the last attempt ended.
    pub last_attempt_at: SystemTime,
    /// Time from the start of the first attempt to the end of the last,
    /// waits included.
    pub elapsed: Duration,
    /// The arguments named in `fields(..)`: text as it is, anything else
    /// by `Debug`.
    pub fields: Vec<(&'static str, String)>,
    /// Every failed attempt, in order.
    pub history: Vec<AttemptRecord>,
}

/// One failed attempt of a recorded call.
///
/// ```
/// use reattempt::dead_letter::{DelayFrom, Memory};
/// use reattempt::{Class, retry};
/// use std::time::Duration;
///
/// static FAILED: Memory = Memory::new();
///
/// #[retry(max = 2, backoff = fixed(1ms), dead_letter = FAILED)]
/// fn sync_orders() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::ConnectionReset.into())
/// }
///
/// sync_orders().unwrap_err();
/// let history = &FAILED.take()[0].history;
/// assert_eq!((history[0].attempt, history[0].class), (1, Class::Transient));
/// assert_eq!(history[0].delay, Some(Duration::from_millis(1)));
/// assert_eq!(history[0].delay_from, Some(DelayFrom::Backoff));
/// assert_eq!(history[1].delay, None, "the last attempt waits for nothing");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AttemptRecord {
    /// The attempt's number, 1 for the first.
    pub attempt: u32,
    /// Its class.
    pub class: Class,
    /// Its code, when known.
    pub code: Option<String>,
    /// The wait chosen before the next attempt; `None` for the last.
    pub delay: Option<Duration>,
    /// Where that wait came from.
    pub delay_from: Option<DelayFrom>,
    /// Whether the attempt was a hedge: started beside a slow one
    /// (`hedge`), rather than after a failure or as the call's first.
    pub hedge: bool,
}

/// Where the wait after an attempt came from.
///
/// ```
/// use reattempt::dead_letter::DelayFrom;
///
/// assert_eq!(DelayFrom::ServerDelay.as_str(), "server_delay");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DelayFrom {
    /// The backoff curve (with jitter, if any).
    Backoff,
    /// The backoff curve, held at its cap.
    Cap,
    /// The server's `Retry-After` (or pushback).
    ServerDelay,
}

impl DelayFrom {
    /// The name in records: `backoff`, `cap` or `server_delay`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DelayFrom::Backoff => "backoff",
            DelayFrom::Cap => "cap",
            DelayFrom::ServerDelay => "server_delay",
        }
    }
}

impl Record {
    /// The record as one line of JSON (no trailing newline).
    ///
    /// ```
    /// use reattempt::dead_letter::Memory;
    /// use reattempt::retry;
    ///
    /// static FAILURES: Memory = Memory::new();
    ///
    /// #[retry(max = 1, dead_letter = FAILURES, name = "app::charge", fields(order))]
    /// fn charge(order: u32) -> std::io::Result<()> {
    ///     Err(std::io::ErrorKind::PermissionDenied.into())
    /// }
    ///
    /// charge(17).unwrap_err();
    /// let json = FAILURES.take()[0].to_json();
    /// assert!(json.starts_with(r#"{"function":"app::charge","call_id":""#));
    /// assert!(json.contains(r#""reason":"permanent""#));
    /// assert!(json.contains(r#""fields":{"order":"17"}"#));
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push('{');
        field(&mut out, "function", &Json::Str(self.function));
        field(&mut out, "call_id", &Json::Str(&self.call_id.to_string()));
        field(
            &mut out,
            "idempotency_key",
            &optional(self.idempotency_key.as_deref()),
        );
        field(&mut out, "host", &Json::Str(self.host));
        field(&mut out, "pid", &Json::Num(u64::from(self.pid)));
        field(&mut out, "reason", &Json::Str(self.reason.as_str()));
        field(&mut out, "class", &Json::Str(self.class.as_str()));
        field(&mut out, "code", &optional(self.code.as_deref()));
        field(&mut out, "error", &Json::Str(&self.error));
        field(&mut out, "attempts", &Json::Num(u64::from(self.attempts)));
        field(
            &mut out,
            "first_attempt_at",
            &Json::Str(&rfc3339(self.first_attempt_at)),
        );
        field(
            &mut out,
            "last_attempt_at",
            &Json::Str(&rfc3339(self.last_attempt_at)),
        );
        field(&mut out, "elapsed_ms", &Json::Num(millis(self.elapsed)));
        out.push_str(r#""fields":"#);
        out.push_str(&self.fields_json());
        out.push_str(r#","history":"#);
        out.push_str(&self.history_json());
        out.push('}');
        out
    }

    /// The `fields` as a JSON object.
    pub fn fields_json(&self) -> String {
        let mut out = String::from("{");
        for (i, (name, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(&mut out, name);
            out.push(':');
            string(&mut out, value);
        }
        out.push('}');
        out
    }

    /// The `history` as a JSON array.
    pub fn history_json(&self) -> String {
        let mut out = String::from("[");
        for (i, attempt) in self.history.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('{');
            field(&mut out, "attempt", &Json::Num(u64::from(attempt.attempt)));
            field(&mut out, "class", &Json::Str(attempt.class.as_str()));
            field(&mut out, "code", &optional(attempt.code.as_deref()));
            field(
                &mut out,
                "delay_ms",
                &attempt.delay.map_or(Json::Null, |d| Json::Num(millis(d))),
            );
            out.push_str(r#""delay_from":"#);
            match attempt.delay_from {
                Some(from) => string(&mut out, from.as_str()),
                None => out.push_str("null"),
            }
            out.push_str(if attempt.hedge {
                r#","hedge":true"#
            } else {
                r#","hedge":false"#
            });
            out.push('}');
        }
        out.push(']');
        out
    }
}

enum Json<'a> {
    Str(&'a str),
    Num(u64),
    Null,
}

fn optional(value: Option<&str>) -> Json<'_> {
    value.map_or(Json::Null, Json::Str)
}

/// `"name":value,`
fn field(out: &mut String, name: &str, value: &Json<'_>) {
    string(out, name);
    out.push(':');
    match value {
        Json::Str(text) => string(out, text),
        Json::Num(n) => {
            let _ = write!(out, "{n}");
        }
        Json::Null => out.push_str("null"),
    }
    out.push(',');
}

/// A JSON string, escaped.
fn string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Why a sink could not store a record.
pub type SinkError = Box<dyn Error + Send + Sync>;

/// A place for records of calls that failed for good.
///
/// `record` is called on the caller's thread when the call gives up,
/// before the caller gets its error; a sink that blocks delays the caller.
/// An error it returns is logged with the record, at ERROR, and the caller
/// still gets its own error.
///
/// ```
/// use reattempt::dead_letter::{DeadLetter, Record, SinkError};
/// use reattempt::retry;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// Counts records, for a dashboard; a real sink would store them.
/// struct Counting(AtomicUsize);
///
/// impl DeadLetter for Counting {
///     fn record(&self, record: &Record) -> Result<(), SinkError> {
///         assert_eq!(record.function, "app::send");
///         self.0.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
///
/// static FAILED: Counting = Counting(AtomicUsize::new(0));
///
/// #[retry(max = 1, dead_letter = FAILED, name = "app::send")]
/// fn send() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::PermissionDenied.into())
/// }
///
/// send().unwrap_err();
/// assert_eq!(FAILED.0.load(Ordering::Relaxed), 1);
/// ```
pub trait DeadLetter: Send + Sync {
    /// Stores one record.
    fn record(&self, record: &Record) -> Result<(), SinkError>;
}

impl<T: DeadLetter + ?Sized> DeadLetter for &T {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        (**self).record(record)
    }
}

impl<T: DeadLetter + ?Sized> DeadLetter for Arc<T> {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        (**self).record(record)
    }
}

impl<T: DeadLetter, F: FnOnce() -> T + Send> DeadLetter for LazyLock<T, F> {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        (**self).record(record)
    }
}

/// A sink set up at run time, in a `static`: records before it is set are
/// errors, and so logged.
impl<T: DeadLetter> DeadLetter for OnceLock<T> {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        match self.get() {
            Some(sink) => sink.record(record),
            None => Err("the dead-letter sink is not set up yet".into()),
        }
    }
}

/// A JSON Lines file: one record per line, appended, each line on disk
/// (`fsync`) before the failed call returns.
///
/// Lines are whole: one writer at a time within the process, and one
/// `write` per line in append mode, so concurrent writers (threads, or
/// processes sharing the file) never interleave. A partial last line left
/// by a crash does not affect new records, which start on a line of their
/// own. A file deleted or moved away while the sink has it open (by a
/// person who has read it, or a log rotation) is made again at its path
/// for the next record.
///
/// ```
/// use reattempt::dead_letter::JsonLines;
/// use reattempt::retry;
///
/// static FAILURES: JsonLines = JsonLines::new("doc-dead-letters.jsonl");
///
/// #[retry(max = 2, backoff = none, dead_letter = FAILURES)]
/// fn sync_inventory() -> std::io::Result<()> {
///     Err(std::io::ErrorKind::PermissionDenied.into())
/// }
///
/// sync_inventory().unwrap_err();
/// let last = std::fs::read_to_string("doc-dead-letters.jsonl").unwrap();
/// assert!(last.lines().last().unwrap().contains(r#""reason":"permanent""#));
/// # std::fs::remove_file("doc-dead-letters.jsonl").unwrap();
/// ```
#[derive(Debug)]
pub struct JsonLines {
    path: &'static str,
    file: Mutex<Option<File>>,
}

impl JsonLines {
    /// A sink appending to the file at `path`, created on the first record
    /// if missing.
    pub const fn new(path: &'static str) -> JsonLines {
        JsonLines {
            path,
            file: Mutex::new(None),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        Path::new(self.path)
    }

    /// Whether `open` is still the file at the path: one stat of each,
    /// beside a record's `fsync`.
    #[cfg(unix)]
    fn is_at_path(&self, open: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(self.path), open.metadata()) {
            (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
            _ => false,
        }
    }

    /// Whether a file is still at the path: elsewhere than on Unix, a file
    /// moved away and made again at the path by another is not told apart.
    #[cfg(not(unix))]
    fn is_at_path(&self, _open: &File) -> bool {
        self.path().exists()
    }

    fn open(&self) -> std::io::Result<File> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(self.path)?;
        // A line cut short by a crash must not swallow the next record. The
        // check holds the file's lock, which every append also takes, so
        // that it never reads another process's append half written and
        // ends a line that was still growing (a blank line once it is done).
        let locked = Locked::new(&file)?;
        let mut handle: &File = &file;
        let end = handle.seek(SeekFrom::End(0))?;
        if end > 0 {
            handle.seek(SeekFrom::Start(end - 1))?;
            let mut last = [0u8];
            handle.read_exact(&mut last)?;
            if last[0] != b'\n' {
                handle.write_all(b"\n")?;
            }
        }
        drop(locked);
        Ok(file)
    }
}

/// The exclusive lock of the file, shared with every process that writes
/// it, while it lives. Where the file system has no locks, nothing is
/// locked: appends stay whole lines, and only the repair at open may race.
struct Locked<'f>(Option<&'f File>);

impl<'f> Locked<'f> {
    fn new(file: &'f File) -> std::io::Result<Locked<'f>> {
        match file.lock() {
            Ok(()) => Ok(Locked(Some(file))),
            Err(error) if error.kind() == std::io::ErrorKind::Unsupported => Ok(Locked(None)),
            Err(error) => Err(error),
        }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Some(file) = self.0 {
            // Closing the file would release it too; an error here leaves
            // nothing to undo.
            let _ = file.unlock();
        }
    }
}

impl DeadLetter for JsonLines {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        let mut line = record.to_json();
        line.push('\n');
        let file = {
            let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
            // Records appended to a file no longer at the path would reach
            // no reader, and vanish with the process if it was deleted.
            if file.as_ref().is_some_and(|open| !self.is_at_path(open)) {
                *file = None;
            }
            if file.is_none() {
                *file = Some(self.open()?);
            }
            let handle = file.as_mut().ok_or("the dead-letter file is not open")?;
            let written = Locked::new(handle).and_then(|_locked| {
                let mut writer: &File = handle;
                writer.write_all(line.as_bytes())
            });
            if let Err(error) = written {
                // Reopen next time: the handle may be the cause.
                *file = None;
                return Err(error.into());
            }
            handle.try_clone()?
        };
        // Outside the lock, so that concurrent records share the disk's
        // flushes instead of queueing for one each.
        file.sync_data()?;
        Ok(())
    }
}

/// Records kept in memory, for tests.
///
/// ```
/// use reattempt::dead_letter::Memory;
/// use reattempt::{GiveUp, retry};
///
/// static FAILURES: Memory = Memory::new();
///
/// #[retry(max = 3, backoff = none, dead_letter = FAILURES, fields(id))]
/// fn load(id: u32) -> std::io::Result<()> {
///     Err(std::io::ErrorKind::TimedOut.into())
/// }
///
/// load(7).unwrap_err();
/// let records = FAILURES.take();
/// assert_eq!(records[0].reason, GiveUp::Exhausted);
/// assert_eq!(records[0].attempts, 3);
/// assert_eq!(records[0].fields, [("id", "7".to_owned())]);
/// ```
#[derive(Debug, Default)]
pub struct Memory {
    records: Mutex<Vec<Record>>,
}

impl Memory {
    /// An empty sink.
    pub const fn new() -> Memory {
        Memory {
            records: Mutex::new(Vec::new()),
        }
    }

    /// The records so far.
    pub fn records(&self) -> Vec<Record> {
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The records so far, leaving none.
    pub fn take(&self) -> Vec<Record> {
        std::mem::take(&mut *self.records.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl DeadLetter for Memory {
    fn record(&self, record: &Record) -> Result<(), SinkError> {
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record.clone());
        Ok(())
    }
}

/// This machine's host name, read once: from the kernel on Linux, else from
/// the environment; `"unknown"` when neither says.
pub(crate) fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::env::var("COMPUTERNAME").ok())
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    })
}

/// Hands a record to its sink; a failing sink's record goes to the logs.
pub(crate) fn deliver(sink: &dyn DeadLetter, record: &Record) {
    if let Err(error) = sink.record(record) {
        log_undelivered(record, &*error);
    }
}

/// The ERROR event of a record no sink took: every field of it.
pub(crate) fn log_undelivered(record: &Record, error: &(dyn Error + 'static)) {
    tracing::error!(
        target: "reattempt",
        function = record.function,
        call_id = %record.call_id,
        idempotency_key = record.idempotency_key.as_deref(),
        host = record.host,
        pid = record.pid,
        reason = record.reason.as_str(),
        class = record.class.as_str(),
        code = record.code.as_deref(),
        error = %record.error,
        attempts = record.attempts,
        first_attempt_at = %rfc3339(record.first_attempt_at),
        last_attempt_at = %rfc3339(record.last_attempt_at),
        elapsed_ms = millis(record.elapsed),
        fields = %record.fields_json(),
        history = %record.history_json(),
        sink_error = %error,
        "dead-letter sink failed; the record is here instead",
    );
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(error: &str) -> Record {
        Record {
            function: "m::f",
            call_id: CallId::from_u128(0x0123_4567_89ab_4def_8123_4567_89ab_cdef),
            idempotency_key: None,
            host: "db-7",
            pid: 42,
            reason: GiveUp::Exhausted,
            class: Class::Transient,
            code: Some("503".into()),
            error: error.into(),
            attempts: 2,
            first_attempt_at: SystemTime::UNIX_EPOCH,
            last_attempt_at: SystemTime::UNIX_EPOCH + Duration::from_millis(1500),
            elapsed: Duration::from_millis(1500),
            fields: vec![("user", "\"ann\"".into())],
            history: vec![
                AttemptRecord {
                    attempt: 1,
                    class: Class::Transient,
                    code: Some("503".into()),
                    delay: Some(Duration::from_secs(1)),
                    delay_from: Some(DelayFrom::Backoff),
                    hedge: false,
                },
                AttemptRecord {
                    attempt: 2,
                    class: Class::Transient,
                    code: None,
                    delay: None,
                    delay_from: None,
                    hedge: false,
                },
            ],
        }
    }

    #[test]
    fn json_escapes_text_and_writes_every_field() {
        let json = record("bad \"quote\"\n\u{1}").to_json();
        assert_eq!(
            json,
            concat!(
                r#"{"function":"m::f","call_id":"01234567-89ab-4def-8123-456789abcdef","idempotency_key":null,"host":"db-7","pid":42,"#,
                r#""reason":"exhausted","class":"transient","code":"503","#,
                r#""error":"bad \"quote\"\n\u0001","attempts":2,"#,
                r#""first_attempt_at":"1970-01-01T00:00:00.000Z","last_attempt_at":"1970-01-01T00:00:01.500Z","#,
                r#""elapsed_ms":1500,"fields":{"user":"\"ann\""},"#,
                r#""history":[{"attempt":1,"class":"transient","code":"503","delay_ms":1000,"delay_from":"backoff","hedge":false},"#,
                r#"{"attempt":2,"class":"transient","code":null,"delay_ms":null,"delay_from":null,"hedge":false}]}"#
            )
        );
    }

    #[test]
    fn a_partial_last_line_does_not_swallow_new_records() {
        let dir = std::env::temp_dir().join(format!("retry-dl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("partial.jsonl");
        std::fs::write(&path, "{\"function\":\"cut sh").unwrap();
        let path: &'static str = Box::leak(path.to_string_lossy().into_owned().into_boxed_str());
        let sink = JsonLines::new(path);
        sink.record(&record("one")).unwrap();
        sink.record(&record("two")).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "{\"function\":\"cut sh");
        assert!(lines[1].contains(r#""error":"one""#));
        assert!(lines[2].contains(r#""error":"two""#));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The errors of the records in the file at `path`, in order.
    fn errors_in(path: &str) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|line| {
                let start = line.find(r#""error":""#).unwrap() + r#""error":""#.len();
                line[start..].split('"').next().unwrap().to_owned()
            })
            .collect()
    }

    /// A person who has read the file deletes it, or a log rotation moves
    /// it away: the records after that go to a new file at the path, where
    /// the next reader looks, not to the one the sink had open.
    #[test]
    fn a_file_deleted_or_moved_away_is_made_again_for_the_next_record() {
        let dir = std::env::temp_dir().join(format!("retry-dl-gone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gone.jsonl");
        let path: &'static str = Box::leak(path.to_string_lossy().into_owned().into_boxed_str());
        let sink = JsonLines::new(path);
        sink.record(&record("before")).unwrap();
        std::fs::remove_file(path).unwrap();
        sink.record(&record("after deletion")).unwrap();
        assert_eq!(errors_in(path), ["after deletion"]);
        let rotated = dir.join("gone.jsonl.1");
        std::fs::rename(path, &rotated).unwrap();
        sink.record(&record("after rotation")).unwrap();
        assert_eq!(errors_in(path), ["after rotation"]);
        assert_eq!(
            errors_in(rotated.to_str().unwrap()),
            ["after deletion"],
            "the rotated file keeps what it had"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
