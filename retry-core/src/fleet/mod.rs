//! A retry budget, and alert streaks, shared by every instance of a
//! service, kept in Redis (feature `redis-fleet`). [`FleetAlerts`] and
//! [`share_alerts`] count `alert_after` streaks for the whole fleet, so
//! that one outage raises one alert; the rest of this page is about the
//! budget.
//!
//! Each instance keeps its [`RetryBudget`](crate::RetryBudget) and
//! [shares](crate::RetryBudget::share) it under a scope its instances have
//! in common (a service and the upstream it calls). From then on:
//!
//! - first attempts are counted locally, as before, and their deposits
//!   reach Redis with the instance's next retry decision: a first attempt
//!   never waits on Redis. Only the window's deposits do: those of an
//!   instance that went longer than the window without a retry expire, as
//!   they do locally, instead of all reaching the fleet with the first
//!   failure;
//! - a retry takes its token from the fleet's balance, atomically (one Lua
//!   script deposits what is pending and withdraws if the balance allows),
//!   so that the fleet's retries stay under `ratio` of the fleet's first
//!   attempts plus one reserve, however many instances there are;
//! - Redis is asked with a timeout of a few milliseconds (5 ms unless set);
//!   when it is slow, down or hangs, the instance decides on its local
//!   budget, logs that once, leaves Redis alone for a second, and rejoins
//!   when it answers again. A call waits on Redis for the timeout at most,
//!   a new connection's set-up included; calls queued behind one that
//!   Redis did not answer go on alone when it times out, instead of each
//!   waiting out a timeout in turn.
//!
//! The fleet's window is kept as ten slots of `window / 10` each, named by
//! wall-clock time so that every instance agrees on them, under keys
//! `reattempt:budget:{scope}:{slot}` that expire after two windows. A slot
//! whose value is not a number is corrupt: it is logged and reset.
//!
//! A retry that waits on Redis is a sync call to it from the retry
//! decision, on the caller's thread (an async function's executor thread
//! included), bounded by the timeout.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use ::redis::{Client, Connection, IntoConnectionInfo, RedisError, Script};

mod pending;

use pending::Pending;

/// How long Redis is given to answer, unless set with `connect_with_timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(5);

/// How long Redis is given to connect and answer as a budget, breaker or
/// alert streak is set up.
const SET_UP: Duration = Duration::from_secs(1);

/// How long an instance decides alone after Redis failed to answer.
const REJOIN_AFTER: Duration = Duration::from_secs(1);

/// Deposits what is pending into the current slot, then withdraws `cost`
/// when the window's balance plus the reserve allows it. Replies
/// `{withdrawn, corrupt}`.
const WITHDRAW: &str = r"
local prefix, slot = KEYS[1], tonumber(ARGV[1])
local deposit, cost, reserve = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local slots, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
local corrupt = 0
local function value(key)
  local v = redis.call('GET', key)
  if not v then return 0 end
  local n = tonumber(v)
  if n == nil or n ~= math.floor(n) then
    redis.call('DEL', key)
    corrupt = 1
    return 0
  end
  return n
end
local current = prefix .. ':' .. slot
value(current)
if deposit ~= 0 then redis.call('INCRBY', current, deposit) end
local balance = reserve
for i = slot - slots + 1, slot do
  balance = balance + value(prefix .. ':' .. i)
end
local withdrawn = 0
if balance >= cost then
  redis.call('INCRBY', current, -cost)
  withdrawn = 1
end
redis.call('PEXPIRE', current, ttl)
return {withdrawn, corrupt}
";

/// A connection to the fleet's Redis, asked with a short timeout, and left
/// alone for a second after it failed to answer.
struct Link {
    client: Client,
    timeout: Duration,
    connection: Mutex<Option<Connection>>,
    /// Until when the instance decides alone, after Redis failed.
    alone_until: Mutex<Option<Instant>>,
    /// Whether the fallback was logged since Redis last answered.
    warned: AtomicBool,
}

impl Link {
    fn open(url: &str, timeout: Duration) -> Result<Link, RedisError> {
        // A new connection asks nothing before the exchange: the two
        // `CLIENT SETINFO` questions the client asks by default would each
        // wait out the timeout of a Redis that hangs, before the exchange's.
        let info = url.into_connection_info()?;
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let client = Client::open(info.set_redis_settings(settings))?;
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
    fn alone(&self) -> bool {
        lock(&self.alone_until).is_some_and(|until| Instant::now() < until)
    }

    /// Runs `ask` on the connection, or `None` when Redis is left alone or
    /// does not answer in time (logged once, for `what` of `scope`).
    fn ask<T>(
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

/// Bounds every read and write of `connection` by `timeout`.
fn bound(connection: &Connection, timeout: Duration) -> Result<(), RedisError> {
    connection.set_read_timeout(Some(timeout))?;
    connection.set_write_timeout(Some(timeout))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The Redis side of a shared retry budget: where it is kept, and how long
/// an instance waits for it.
///
/// ```
/// use reattempt::fleet::FleetBudget;
/// use std::time::Duration;
///
/// // A bad URL is an error at set-up, never a silent fallback later.
/// assert!(FleetBudget::connect("not a url", "orders->payments").is_err());
/// // Given 20 ms rather than 5 for a Redis further away:
/// let budget = FleetBudget::connect_with_timeout(
///     "redis://127.0.0.1:6379",
///     "orders->payments",
///     Duration::from_millis(20),
/// );
/// # drop(budget);
/// ```
pub struct FleetBudget {
    link: Link,
    scope: String,
    script: Script,
    /// Deposits counted locally and not yet in Redis, in milli-tokens.
    pending: Pending<1>,
}

/// What the fleet said about a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fleet {
    /// The fleet's balance gave the retry its token.
    Withdrawn,
    /// The fleet's budget is spent.
    Refused,
    /// Redis did not answer in time: the local budget decides.
    Unreachable,
}

impl std::fmt::Debug for FleetBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetBudget")
            .field("scope", &self.scope)
            .field("timeout", &self.link.timeout)
            .field("pending", &self.pending.held()[0])
            .finish_non_exhaustive()
    }
}

impl FleetBudget {
    /// Connects to the Redis at `url` (`redis://[:password@]host:port/db`)
    /// for the budget of `scope`, checking now that it answers and accepts
    /// the credentials: a wrong URL or password is an error here, not a
    /// silent fallback later. Redis is then asked with a 5 ms timeout.
    pub fn connect(url: &str, scope: &str) -> Result<FleetBudget, RedisError> {
        FleetBudget::connect_with_timeout(url, scope, DEFAULT_TIMEOUT)
    }

    /// [`connect`](Self::connect), asking Redis with `timeout` (at least
    /// 1 ms) on every retry decision. The check at set-up takes a second at
    /// most: a Redis that has not answered by then is an error.
    pub fn connect_with_timeout(
        url: &str,
        scope: &str,
        timeout: Duration,
    ) -> Result<FleetBudget, RedisError> {
        Ok(FleetBudget {
            link: Link::open(url, timeout)?,
            scope: scope.to_owned(),
            script: Script::new(WITHDRAW),
            pending: Pending::new(),
        })
    }

    /// The scope the budget is shared under.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The prefix of the budget's keys in Redis.
    pub fn key_prefix(&self) -> String {
        format!("reattempt:budget:{}", self.scope)
    }

    /// A first attempt's deposit, made in the local budget's slot `index`,
    /// kept until the next withdrawal.
    pub(crate) fn deposit(&self, milli: i64, index: u64) {
        self.pending.add(index, [milli]);
    }

    /// Asks the fleet for a retry's token of `cost` milli-tokens, with the
    /// window of `slot_nanos` slots and the fleet's `reserve`, in the local
    /// budget's slot `index`.
    pub(crate) fn withdraw(&self, cost: i64, reserve: i64, slot_nanos: u64, index: u64) -> Fleet {
        let taken = self.pending.take(index);
        let [deposit] = Pending::sums(&taken);
        let since = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let slot = since.as_nanos() / u128::from(slot_nanos.max(1));
        let ttl_ms = (u128::from(slot_nanos) * 20 / 1_000_000).max(1);
        let answer = self.link.ask(&self.scope, "retry budget", |conn| {
            self.script
                .key(self.key_prefix())
                .arg(u64::try_from(slot).unwrap_or(u64::MAX))
                .arg(deposit)
                .arg(cost)
                .arg(reserve)
                .arg(10)
                .arg(u64::try_from(ttl_ms).unwrap_or(u64::MAX))
                .invoke::<(i64, i64)>(conn)
        });
        let Some((withdrawn, corrupt)) = answer else {
            // The deposits were not counted: keep them for next time.
            self.pending.give_back(taken);
            return Fleet::Unreachable;
        };
        if corrupt == 1 {
            tracing::error!(
                target: "reattempt",
                scope = %self.scope,
                "the fleet's retry budget in Redis held a value that is not a number; it was reset",
            );
        }
        if withdrawn == 1 {
            Fleet::Withdrawn
        } else {
            Fleet::Refused
        }
    }
}

/// Counts a function's failure streak for the whole fleet; replies
/// `{count, fire}`: the streak's length, and 1 for the one instance that
/// raises its alert.
const STREAK: &str = r"
local prefix, kind, after, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local kind_key, count_key, fired_key = prefix .. ':kind', prefix .. ':count', prefix .. ':fired'
if redis.call('GET', kind_key) ~= kind then
  redis.call('SET', kind_key, kind, 'PX', ttl)
  redis.call('SET', count_key, 0, 'PX', ttl)
  redis.call('DEL', fired_key)
end
local count = redis.call('INCR', count_key)
redis.call('PEXPIRE', count_key, ttl)
redis.call('PEXPIRE', kind_key, ttl)
local fire = 0
if count >= after and redis.call('SET', fired_key, '1', 'NX', 'PX', ttl) then fire = 1 end
return {count, fire}
";

/// Alert streaks (`alert_after`) counted for the whole fleet in Redis, so
/// that one outage raises one alert, not one per instance (feature
/// `redis-fleet`). Share them once at start-up with [`share_alerts`]; the
/// streak of each function is then counted across every instance sharing
/// the scope, and the one instance whose failure completes it raises the
/// alert (a `SET NX` on the streak's key). A success anywhere ends the
/// streak. When Redis is slow or down, streaks are counted locally, as
/// without sharing, and that is logged once.
///
/// ```no_run
/// use reattempt::fleet::{FleetAlerts, share_alerts};
///
/// share_alerts(FleetAlerts::connect("redis://127.0.0.1:6379", "orders")?).expect("once");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetAlerts {
    link: Link,
    scope: String,
    script: Script,
}

impl std::fmt::Debug for FleetAlerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetAlerts")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// How long a fleet streak lives after its last failure.
const STREAK_TTL: Duration = Duration::from_secs(3600);

impl FleetAlerts {
    /// Connects to the Redis at `url` for the alert streaks of `scope`,
    /// checking now that it answers; asked with a 5 ms timeout after that.
    pub fn connect(url: &str, scope: &str) -> Result<FleetAlerts, RedisError> {
        FleetAlerts::connect_with_timeout(url, scope, DEFAULT_TIMEOUT)
    }

    /// [`connect`](Self::connect), asking Redis with `timeout`.
    pub fn connect_with_timeout(
        url: &str,
        scope: &str,
        timeout: Duration,
    ) -> Result<FleetAlerts, RedisError> {
        Ok(FleetAlerts {
            link: Link::open(url, timeout)?,
            scope: scope.to_owned(),
            script: Script::new(STREAK),
        })
    }

    fn prefix(&self, function: &str) -> String {
        format!("reattempt:alert:{}:{function}", self.scope)
    }

    /// A failure of `function` of the kind `kind` (class and code): the
    /// fleet's streak and whether this instance raises the alert, or `None`
    /// when Redis did not answer.
    pub(crate) fn failure(&self, function: &str, kind: &str, after: u32) -> Option<(u32, bool)> {
        let ttl = u64::try_from(STREAK_TTL.as_millis()).unwrap_or(u64::MAX);
        let (count, fire) = self.link.ask(&self.scope, "alert streak", |conn| {
            self.script
                .key(self.prefix(function))
                .arg(kind)
                .arg(after)
                .arg(ttl)
                .invoke::<(i64, i64)>(conn)
        })?;
        Some((u32::try_from(count).unwrap_or(u32::MAX), fire == 1))
    }

    /// A success of `function`: the fleet's streak ends.
    pub(crate) fn success(&self, function: &str) {
        let prefix = self.prefix(function);
        let _ = self.link.ask(&self.scope, "alert streak", |conn| {
            ::redis::cmd("DEL")
                .arg(format!("{prefix}:kind"))
                .arg(format!("{prefix}:count"))
                .arg(format!("{prefix}:fired"))
                .query::<()>(conn)
        });
    }
}

static ALERTS: std::sync::OnceLock<FleetAlerts> = std::sync::OnceLock::new();

/// Counts every function's alert streak across the fleet from now on; a
/// second call gives `alerts` back, boxed.
///
/// ```no_run
/// use reattempt::fleet::{FleetAlerts, share_alerts};
///
/// share_alerts(FleetAlerts::connect("redis://127.0.0.1:6379", "orders")?).expect("once");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn share_alerts(alerts: FleetAlerts) -> Result<(), Box<FleetAlerts>> {
    ALERTS.set(alerts).map_err(Box::new)
}

/// The fleet's alert streaks, once shared.
pub(crate) fn alerts() -> Option<&'static FleetAlerts> {
    ALERTS.get()
}

/// Adds what an instance counted since its last decision to the fleet's
/// window, then decides whether a retry may go: 1, or 2 for a probe, or 0.
/// Opens the breaker when the window's failure ratio reaches the
/// threshold; once the cool-down is over, lets `probes` retries through,
/// and opens it again for another cool-down when they are spent.
const BREAKER: &str = r"
local prefix, slot = KEYS[1], tonumber(ARGV[1])
local new_attempts, new_failures = tonumber(ARGV[2]), tonumber(ARGV[3])
local threshold, least, slots, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local now, cool, probes = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local function add(key, n)
  if n > 0 then
    redis.call('INCRBY', key, n)
    redis.call('PEXPIRE', key, ttl)
  end
end
add(prefix .. ':a:' .. slot, new_attempts)
add(prefix .. ':f:' .. slot, new_failures)
local attempts, failures = 0, 0
for i = slot - slots + 1, slot do
  attempts = attempts + (tonumber(redis.call('GET', prefix .. ':a:' .. i)) or 0)
  failures = failures + (tonumber(redis.call('GET', prefix .. ':f:' .. i)) or 0)
end
local function open()
  redis.call('SET', prefix .. ':open', now, 'PX', ttl)
  redis.call('SET', prefix .. ':probes', probes, 'PX', ttl)
  return 0
end
local opened = tonumber(redis.call('GET', prefix .. ':open'))
if opened then
  if now - opened < cool then return 0 end
  if redis.call('DECR', prefix .. ':probes') >= 0 then return 2 end
  return open()
end
if attempts >= least and failures >= threshold * attempts then return open() end
return 1
";

/// Closes the fleet's breaker: the backend answered. The window's counts go
/// with it, so that the failures that opened it do not open it again. While
/// it cools down it stays open, as an instance's own does: replies 0.
const CLOSE: &str = r"
local prefix, slot, slots = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local now, cool = tonumber(ARGV[3]), tonumber(ARGV[4])
local opened = tonumber(redis.call('GET', prefix .. ':open'))
if opened and now - opened < cool then return 0 end
redis.call('DEL', prefix .. ':open', prefix .. ':probes')
for i = slot - slots + 1, slot do
  redis.call('DEL', prefix .. ':a:' .. i, prefix .. ':f:' .. i)
end
return 1
";

/// The Redis side of a retry breaker shared by the fleet (feature
/// `redis-fleet`): the failure ratio is the fleet's, and when it opens,
/// retries stop on every instance. Share it once at start-up with
/// [`RetryBreaker::share`](crate::RetryBreaker::share).
///
/// Each instance counts its attempts locally and adds those of the last
/// window (older ones expire, as they do locally) to the fleet's window
/// with its next retry decision, so a success touches Redis only when the
/// instance last saw the breaker open, or was let through as a probe: the
/// success closes it for everyone once the cool-down is over (before that
/// it stays open, as an instance's own does, and a later success closes
/// it). When Redis is slow or down, the instance's own breaker decides,
/// and that is logged once.
///
/// ```no_run
/// use reattempt::fleet::FleetBreaker;
/// use reattempt::{RetryBreaker, retry};
/// use std::time::Duration;
///
/// static PAYMENTS: RetryBreaker =
///     RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3);
///
/// #[retry(max = 4, breaker = PAYMENTS)]
/// fn charge() -> std::io::Result<()> {
///     Ok(())
/// }
///
/// PAYMENTS
///     .share(FleetBreaker::connect("redis://127.0.0.1:6379", "payments")?)
///     .expect("shared once");
/// charge()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetBreaker {
    link: Link,
    scope: String,
    decide: Script,
    close: Script,
    /// Attempts and failures counted locally and not yet in Redis.
    pending: Pending<2>,
    /// Whether this instance last saw the fleet's breaker open, or letting
    /// a probe through: its next success closes it.
    saw_open: AtomicBool,
}

impl std::fmt::Debug for FleetBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetBreaker")
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl FleetBreaker {
    /// Connects to the Redis at `url` for the breaker of `scope`, checking
    /// now that it answers; asked with a 5 ms timeout after that.
    pub fn connect(url: &str, scope: &str) -> Result<FleetBreaker, RedisError> {
        FleetBreaker::connect_with_timeout(url, scope, DEFAULT_TIMEOUT)
    }

    /// [`connect`](Self::connect), asking Redis with `timeout`.
    pub fn connect_with_timeout(
        url: &str,
        scope: &str,
        timeout: Duration,
    ) -> Result<FleetBreaker, RedisError> {
        Ok(FleetBreaker {
            link: Link::open(url, timeout)?,
            scope: scope.to_owned(),
            decide: Script::new(BREAKER),
            close: Script::new(CLOSE),
            pending: Pending::new(),
            saw_open: AtomicBool::new(false),
        })
    }

    fn prefix(&self) -> String {
        format!("reattempt:breaker:{}", self.scope)
    }

    /// An attempt ended, in the local breaker's slot `index`; on a success
    /// after the breaker was seen open or let a probe through, the fleet's
    /// breaker closes, once its `cool_down` is over.
    pub(crate) fn record(&self, failed: bool, slot_nanos: u64, cool_down: Duration, index: u64) {
        self.pending.add(index, [1, i64::from(failed)]);
        if !failed && self.saw_open.swap(false, Ordering::Relaxed) {
            let slot = slot_of(slot_nanos);
            let closed = self.link.ask(&self.scope, "retry breaker", |conn| {
                self.close
                    .key(self.prefix())
                    .arg(slot)
                    .arg(10)
                    .arg(now_ms())
                    .arg(millis(cool_down))
                    .invoke::<i64>(conn)
            });
            if closed != Some(1) {
                // Still cooling down, or not heard: a later success closes it.
                self.saw_open.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Whether the fleet lets a retry go, in the local breaker's slot
    /// `index`, or `None` when Redis did not answer.
    pub(crate) fn allow_retry(
        &self,
        threshold: f64,
        min_attempts: u64,
        slot_nanos: u64,
        cool_down: Duration,
        probes: u32,
        index: u64,
    ) -> Option<bool> {
        let taken = self.pending.take(index);
        let [attempts, failures] = Pending::sums(&taken);
        let ttl_ms = (u128::from(slot_nanos) * 20 / 1_000_000)
            .max(cool_down.as_millis() * 2)
            .max(1);
        let answer = self.link.ask(&self.scope, "retry breaker", |conn| {
            self.decide
                .key(self.prefix())
                .arg(slot_of(slot_nanos))
                .arg(attempts)
                .arg(failures)
                .arg(threshold)
                .arg(min_attempts)
                .arg(10)
                .arg(u64::try_from(ttl_ms).unwrap_or(u64::MAX))
                .arg(now_ms())
                .arg(millis(cool_down))
                .arg(probes)
                .invoke::<i64>(conn)
        });
        let Some(allowed) = answer else {
            // Not counted: keep them for next time.
            self.pending.give_back(taken);
            return None;
        };
        // Open, or letting a probe through: the next success closes it.
        self.saw_open.store(allowed != 1, Ordering::Relaxed);
        Some(allowed != 0)
    }
}

/// Wall-clock milliseconds, as every instance counts them.
fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    millis(since)
}

/// `duration` in whole milliseconds, at most `u64::MAX`.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The slot of wall-clock time of `slot_nanos`, as every instance counts it.
fn slot_of(slot_nanos: u64) -> u64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_nanos() / u128::from(slot_nanos.max(1))).unwrap_or(u64::MAX)
}
