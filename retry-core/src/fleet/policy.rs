//! A dynamic policy kept in Redis for the whole fleet: each instance's
//! [`PolicyCell`] follows one key, so that one `SET` changes the policy of
//! every instance.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use ::redis::{Client, Connection, RedisError};

use super::link;

use crate::dynamic::{DynamicPolicy, PolicyCell};

/// How often the key is read, unless set with
/// [`follow_every`](FleetPolicy::follow_every).
const DEFAULT_EVERY: Duration = Duration::from_secs(1);

/// How long Redis is given to connect and answer one read.
const TIMEOUT: Duration = Duration::from_secs(1);

/// A [`PolicyCell`] that follows a Redis key holding a policy in its text
/// form (`max = 3, backoff = exp(base = 100ms), deadline = 10s`), so that
/// one `SET` changes the policy of every instance of a service (feature
/// `redis-fleet`).
///
/// [`follow`](FleetPolicy::follow) reads the key once before it returns,
/// then a thread of its own reads it every second: each new valid value
/// replaces the cell's policy, and the next call of every function naming
/// the cell uses it. While Redis is down or does not answer, or the value
/// does not read as a valid policy, the last good policy stays, and the
/// problem is logged once (WARN) until it ends. A key that does not exist
/// gives the cell back the policy it held when following began. Following
/// stops when the `FleetPolicy` is dropped; keep it for as long as the
/// service runs.
///
/// ```no_run
/// use reattempt::dynamic::{DynamicPolicy, PolicyCell};
/// use reattempt::fleet::FleetPolicy;
/// use reattempt::retry;
///
/// static PAYMENTS: PolicyCell = PolicyCell::new(DynamicPolicy::new());
///
/// #[retry(max = 4, deadline = 10s, policy = PAYMENTS)]
/// fn charge(amount: u64) -> std::io::Result<u64> {
///     Ok(amount)
/// }
///
/// // At start-up; then `SET retry:payments "max = 2, deadline = 5s"` in
/// // Redis changes every instance's policy within a second.
/// let _following = FleetPolicy::follow(&PAYMENTS, "redis://127.0.0.1:6379", "retry:payments")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FleetPolicy {
    key: String,
    /// Dropped to stop the follower.
    stop: Option<mpsc::Sender<()>>,
    follower: Option<JoinHandle<()>>,
}

impl FleetPolicy {
    /// Follows `key` of the Redis at `url` into `cell`, reading it every
    /// second. A wrong URL or password, or a Redis that does not answer
    /// within a second, is an error here; later failures are logged.
    pub fn follow(
        cell: &'static PolicyCell,
        url: &str,
        key: &str,
    ) -> Result<FleetPolicy, RedisError> {
        FleetPolicy::follow_every(cell, url, key, DEFAULT_EVERY)
    }

    /// [`follow`](FleetPolicy::follow), reading the key every `every`.
    pub fn follow_every(
        cell: &'static PolicyCell,
        url: &str,
        key: &str,
        every: Duration,
    ) -> Result<FleetPolicy, RedisError> {
        let client = link::client(url)?;
        let mut follower = Follower {
            connection: Some(connect(&client)?),
            client,
            key: key.to_owned(),
            cell,
            own: cell.get(),
            seen: Seen::Nothing,
            unreachable: false,
        };
        follower.read()?;
        let (stop, stopped) = mpsc::channel::<()>();
        // The follower logs where following began: to the subscriber of
        // this thread, scoped or global.
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        let every = every.max(Duration::from_millis(1));
        let follower = thread::Builder::new()
            .name("reattempt-fleet-policy".into())
            .spawn(move || {
                tracing::dispatcher::with_default(&dispatch, || {
                    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                        follower.follow();
                    }
                });
            })
            .map_err(RedisError::from)?;
        Ok(FleetPolicy {
            key: key.to_owned(),
            stop: Some(stop),
            follower: Some(follower),
        })
    }

    /// The key followed.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for FleetPolicy {
    /// Stops following: the follower ends at once, or after the read it is
    /// making, which Redis answers within a second or fails.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(follower) = self.follower.take() {
            let _ = follower.join();
        }
    }
}

/// What the follower last read, so that each change is logged once.
#[derive(PartialEq)]
enum Seen {
    Nothing,
    /// A valid policy, or a value that does not read as one, as written.
    Value(String),
    /// No key.
    Missing,
}

struct Follower {
    client: Client,
    connection: Option<Connection>,
    key: String,
    cell: &'static PolicyCell,
    /// The cell's policy when following began, for a key that is deleted.
    own: DynamicPolicy,
    seen: Seen,
    /// Whether Redis failed to answer the last read.
    unreachable: bool,
}

impl Follower {
    /// One read of the key; Redis failing to answer is logged once, until
    /// it answers again.
    fn follow(&mut self) {
        match self.read() {
            Ok(()) => {
                if std::mem::take(&mut self.unreachable) {
                    tracing::info!(
                        target: "reattempt",
                        key = %self.key,
                        "Redis answers again: following the fleet's policy",
                    );
                }
            }
            Err(error) => {
                self.connection = None;
                if !std::mem::replace(&mut self.unreachable, true) {
                    tracing::warn!(
                        target: "reattempt",
                        key = %self.key,
                        error = %error,
                        "Redis did not answer for the fleet's policy: the last good policy stays",
                    );
                }
            }
        }
    }

    /// Reads the key and puts what it holds in the cell, when it changed.
    fn read(&mut self) -> Result<(), RedisError> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            slot @ None => slot.insert(connect(&self.client)?),
        };
        let value: Option<String> = ::redis::cmd("GET").arg(&self.key).query(connection)?;
        match value {
            None if self.seen != Seen::Missing => {
                self.cell.set(self.own);
                tracing::info!(
                    target: "reattempt",
                    key = %self.key,
                    "no fleet policy in Redis: the cell's own policy applies",
                );
                self.seen = Seen::Missing;
            }
            Some(text) if !matches!(&self.seen, Seen::Value(seen) if *seen == text) => {
                match text.parse::<DynamicPolicy>() {
                    Ok(policy) => {
                        self.cell.set(policy);
                        tracing::info!(
                            target: "reattempt",
                            key = %self.key,
                            policy = %policy,
                            "fleet policy read from Redis",
                        );
                    }
                    Err(problem) => tracing::warn!(
                        target: "reattempt",
                        key = %self.key,
                        value = %text,
                        problem = %problem,
                        "invalid fleet policy in Redis: the last good policy stays",
                    ),
                }
                self.seen = Seen::Value(text);
            }
            _ => {}
        }
        Ok(())
    }
}

/// A connection whose every read and write is bounded.
fn connect(client: &Client) -> Result<Connection, RedisError> {
    let connection = client.get_connection_with_timeout(TIMEOUT)?;
    link::bound(&connection, TIMEOUT)?;
    Ok(connection)
}
