//! A retry budget shared by every instance of a service, kept in Redis
//! (feature `redis-fleet`).
//!
//! Each instance keeps its [`RetryBudget`](crate::RetryBudget) and
//! [shares](crate::RetryBudget::share) it under a scope its instances have
//! in common (a service and the upstream it calls). From then on:
//!
//! - first attempts are counted locally, as before, and their deposits
//!   reach Redis with the instance's next retry decision: a first attempt
//!   never waits on Redis;
//! - a retry takes its token from the fleet's balance, atomically (one Lua
//!   script deposits what is pending and withdraws if the balance allows),
//!   so that the fleet's retries stay under `ratio` of the fleet's first
//!   attempts plus one reserve, however many instances there are;
//! - Redis is asked with a timeout of a few milliseconds (5 ms unless set);
//!   when it is slow or down, the instance decides on its local budget,
//!   logs that once, leaves Redis alone for a second, and rejoins when it
//!   answers again. No call waits on Redis longer than the timeout.
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
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use ::redis::{Client, Connection, RedisError, Script};

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

/// The Redis side of a shared retry budget: where it is kept, and how long
/// an instance waits for it.
pub struct FleetBudget {
    client: Client,
    scope: String,
    timeout: Duration,
    script: Script,
    connection: Mutex<Option<Connection>>,
    /// Deposits counted locally and not yet in Redis, in milli-tokens.
    pending: AtomicI64,
    /// Until when the instance decides alone, after Redis failed.
    alone_until: Mutex<Option<Instant>>,
    /// Whether the fallback was logged since Redis last answered.
    warned: AtomicBool,
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
            .field("timeout", &self.timeout)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl FleetBudget {
    /// Connects to the Redis at `url` (`redis://[:password@]host:port/db`)
    /// for the budget of `scope`, checking now that it answers and accepts
    /// the credentials: a wrong URL or password is an error here, not a
    /// silent fallback later. Redis is then asked with a 5 ms timeout.
    pub fn connect(url: &str, scope: &str) -> Result<FleetBudget, RedisError> {
        FleetBudget::connect_with_timeout(url, scope, Duration::from_millis(5))
    }

    /// [`connect`](Self::connect), asking Redis with `timeout` (at least
    /// 1 ms) on every retry decision. The check at set-up may take up to a
    /// second.
    pub fn connect_with_timeout(
        url: &str,
        scope: &str,
        timeout: Duration,
    ) -> Result<FleetBudget, RedisError> {
        let client = Client::open(url)?;
        let mut connection = client.get_connection_with_timeout(Duration::from_secs(1))?;
        ::redis::cmd("PING").query::<()>(&mut connection)?;
        let timeout = timeout.max(Duration::from_millis(1));
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))?;
        Ok(FleetBudget {
            client,
            scope: scope.to_owned(),
            timeout,
            script: Script::new(WITHDRAW),
            connection: Mutex::new(Some(connection)),
            pending: AtomicI64::new(0),
            alone_until: Mutex::new(None),
            warned: AtomicBool::new(false),
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

    /// A first attempt's deposit, kept until the next withdrawal.
    pub(crate) fn deposit(&self, milli: i64) {
        self.pending.fetch_add(milli, Ordering::Relaxed);
    }

    /// Asks the fleet for a retry's token of `cost` milli-tokens, with the
    /// window of `slot_nanos` slots and the fleet's `reserve`.
    pub(crate) fn withdraw(&self, cost: i64, reserve: i64, slot_nanos: u64) -> Fleet {
        let now = Instant::now();
        {
            let alone = self
                .alone_until
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if alone.is_some_and(|until| now < until) {
                return Fleet::Unreachable;
            }
        }
        let deposit = self.pending.swap(0, Ordering::Relaxed);
        match self.ask(deposit, cost, reserve, slot_nanos) {
            Ok((withdrawn, corrupt)) => {
                if corrupt {
                    tracing::error!(
                        target: "reattempt",
                        scope = %self.scope,
                        "the fleet's retry budget in Redis held a value that is not a number; it was reset",
                    );
                }
                if self.warned.swap(false, Ordering::Relaxed) {
                    tracing::info!(
                        target: "reattempt",
                        scope = %self.scope,
                        "Redis answers again: the retry budget is shared with the fleet once more",
                    );
                }
                if withdrawn {
                    Fleet::Withdrawn
                } else {
                    Fleet::Refused
                }
            }
            Err(error) => {
                // The deposits were not counted: keep them for next time.
                self.pending.fetch_add(deposit, Ordering::Relaxed);
                *self
                    .alone_until
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(now + REJOIN_AFTER);
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        target: "reattempt",
                        scope = %self.scope,
                        error = %error,
                        timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                        "Redis did not answer for the fleet's retry budget: deciding on the local budget until it does",
                    );
                }
                Fleet::Unreachable
            }
        }
    }

    fn ask(
        &self,
        deposit: i64,
        cost: i64,
        reserve: i64,
        slot_nanos: u64,
    ) -> Result<(bool, bool), RedisError> {
        let mut connection = self
            .connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let conn = match &mut *connection {
            Some(conn) => conn,
            slot @ None => {
                let fresh = self.client.get_connection_with_timeout(self.timeout)?;
                fresh.set_read_timeout(Some(self.timeout))?;
                fresh.set_write_timeout(Some(self.timeout))?;
                slot.insert(fresh)
            }
        };
        let since = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let slot = since.as_nanos() / u128::from(slot_nanos.max(1));
        let ttl_ms = (u128::from(slot_nanos) * 20 / 1_000_000).max(1);
        let reply: Result<(i64, i64), RedisError> = self
            .script
            .key(self.key_prefix())
            .arg(u64::try_from(slot).unwrap_or(u64::MAX))
            .arg(deposit)
            .arg(cost)
            .arg(reserve)
            .arg(10)
            .arg(u64::try_from(ttl_ms).unwrap_or(u64::MAX))
            .invoke(conn);
        match reply {
            Ok((withdrawn, corrupt)) => Ok((withdrawn == 1, corrupt == 1)),
            Err(error) => {
                // A connection that timed out may be mid-reply: start over.
                *connection = None;
                Err(error)
            }
        }
    }
}
