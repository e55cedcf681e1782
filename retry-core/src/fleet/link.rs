//! A connection to the fleet's Redis, asked with a short timeout, and left
//! alone for a second after it failed to answer.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ::redis::{Client, Connection, IntoConnectionInfo, RedisError};

/// How long Redis is given to answer, unless set with `connect_with_timeout`.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(5);

/// How long Redis is given to connect and answer as a budget, breaker or
/// alert streak is set up.
const SET_UP: Duration = Duration::from_secs(1);

/// How long an instance decides alone after Redis failed to answer.
const REJOIN_AFTER: Duration = Duration::from_secs(1);

/// A connection to the fleet's Redis, asked with a short timeout, and left
/// alone for a second after it failed to answer.
pub(super) struct Link {
    client: Client,
    pub(super) timeout: Duration,
    connection: Mutex<Option<Connection>>,
    /// Until when the instance decides alone, after Redis failed.
    alone_until: Mutex<Option<Instant>>,
    /// Whether the fallback was logged since Redis last answered.
    warned: AtomicBool,
}

impl Link {
    pub(super) fn open(url: &str, timeout: Duration) -> Result<Link, RedisError> {
        let client = client(url)?;
        let asked = Instant::now();
        let mut connection = client.get_connection_with_timeout(SET_UP)?;
        // A Redis that hangs is an error here, not a start-up that waits
        // for it forever.
        bound(&connection, time_left(SET_UP, asked)?)?;
        ::redis::cmd("PING").query::<()>(&mut connection)?;
        let timeout = timeout.max(Duration::from_millis(1));
        Ok(Link {
            client,
            timeout,
            connection: Mutex::new(Some(connection)),
            alone_until: Mutex::new(None),
            warned: AtomicBool::new(false),
        })
    }

    /// Whether the instance decides alone for now, after Redis failed.
    pub(super) fn alone(&self) -> bool {
        lock(&self.alone_until).is_some_and(|until| Instant::now() < until)
    }

    /// Runs `ask` on the connection, or `None` when Redis is left alone or
    /// does not answer in time (logged once, for `what` of `scope`).
    pub(super) fn ask<T>(
        &self,
        scope: &str,
        what: &str,
        ask: impl FnOnce(&mut Connection) -> Result<T, RedisError>,
    ) -> Option<T> {
        if self.alone() {
            return None;
        }
        let answer = {
            let mut connection = lock(&self.connection);
            // A call that queued here behind one that Redis did not answer
            // goes on alone too, instead of waiting out a timeout of its own:
            // many threads would otherwise wait in turn, the last of them
            // for as many timeouts as there were threads.
            if self.alone() {
                return None;
            }
            // The timeout bounds the whole exchange, a new connection's
            // set-up included; waiting for the lock is not counted, so that
            // calls queued behind others' answers under load do not time out.
            let asked = Instant::now();
            let conn = match &mut *connection {
                Some(conn) => Ok(conn),
                slot @ None => self
                    .client
                    .get_connection_with_timeout(self.timeout)
                    .map(|fresh| slot.insert(fresh)),
            };
            let answer = conn.and_then(|conn| {
                bound(conn, time_left(self.timeout, asked)?)?;
                ask(conn)
            });
            if answer.is_err() {
                // A connection that timed out may be mid-reply: start over.
                *connection = None;
                // Set before the lock is let go, so that no call queued
                // behind this one asks Redis again.
                *lock(&self.alone_until) = Some(Instant::now() + REJOIN_AFTER);
            }
            answer
        };
        match answer {
            Ok(value) => {
                if self.warned.swap(false, Ordering::Relaxed) {
                    tracing::info!(
                        target: "reattempt",
                        scope,
                        what,
                        "Redis answers again: shared with the fleet once more",
                    );
                }
                Some(value)
            }
            Err(error) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        target: "reattempt",
                        scope,
                        what,
                        error = %error,
                        timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                        "Redis did not answer for the fleet: deciding locally until it does",
                    );
                }
                None
            }
        }
    }
}

/// What is left of `timeout` for an exchange with Redis that began at
/// `asked`, a new connection's set-up included.
fn time_left(timeout: Duration, asked: Instant) -> Result<Duration, RedisError> {
    match timeout.checked_sub(asked.elapsed()) {
        Some(left) if !left.is_zero() => Ok(left),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the timeout passed while connecting",
        )
        .into()),
    }
}

/// A client of the Redis at `url` whose new connections ask nothing
/// before the exchange: the two `CLIENT SETINFO` questions the client asks
/// by default would each wait out the timeout of a Redis that hangs,
/// before the exchange's.
pub(super) fn client(url: &str) -> Result<Client, RedisError> {
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    Client::open(info.set_redis_settings(settings))
}

/// Bounds every read and write of `connection` by `timeout`.
pub(super) fn bound(connection: &Connection, timeout: Duration) -> Result<(), RedisError> {
    connection.set_read_timeout(Some(timeout))?;
    connection.set_write_timeout(Some(timeout))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
