//! The Redis side of a shared retry budget, and how a budget is shared.

use std::time::{Duration, SystemTime};

use ::redis::{RedisError, Script};

use super::install;
use super::link::{DEFAULT_TIMEOUT, Link};
use super::pending::Pending;
use crate::RetryBudget;
use crate::twin::BudgetTwin;

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
}

// Asserted, as a `BudgetTwin` must be: the budget keeps its counts in
// atomics and takes every lock past a panic's poison, so a panic leaves
// nothing half-changed that another caller could see.
impl std::panic::RefUnwindSafe for FleetBudget {}
impl std::panic::UnwindSafe for FleetBudget {}

impl BudgetTwin for FleetBudget {
    /// A first attempt's deposit, made in the local budget's slot `index`,
    /// kept until the next withdrawal.
    fn deposit(&self, milli: i64, index: u64) {
        self.pending.add(index, [milli]);
    }

    /// Asks the fleet for a retry's token of `cost` milli-tokens, with the
    /// window of `slot_nanos` slots and the fleet's `reserve`, in the local
    /// budget's slot `index`.
    fn withdraw(&self, cost: i64, reserve: i64, slot_nanos: u64, index: u64) -> Option<bool> {
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
            return None;
        };
        if corrupt == 1 {
            tracing::error!(
                target: "reattempt",
                scope = %self.scope,
                "the fleet's retry budget in Redis held a value that is not a number; it was reset",
            );
        }
        Some(withdrawn == 1)
    }
}

impl RetryBudget {
    /// Shares this budget with every instance that shares one under the
    /// same scope in the same Redis (feature `redis-fleet`; see
    /// [`fleet`](crate::fleet)). Call it once at start-up; a budget already
    /// shared gives `fleet` back, boxed.
    ///
    /// ```no_run
    /// use reattempt::fleet::FleetBudget;
    /// use reattempt::{RetryBudget, retry};
    /// use std::time::Duration;
    ///
    /// static PAYMENTS: RetryBudget = RetryBudget::new(0.1, 1, Duration::from_secs(10));
    ///
    /// #[retry(max = 4, budget = PAYMENTS)]
    /// fn charge() -> std::io::Result<()> {
    ///     Ok(())
    /// }
    ///
    /// let fleet = FleetBudget::connect("redis://127.0.0.1:6379", "orders->payments")?;
    /// PAYMENTS.share(fleet).expect("shared once");
    /// charge()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn share(&self, fleet: FleetBudget) -> Result<(), Box<FleetBudget>> {
        install(&self.shared, fleet, |fleet| -> Box<dyn BudgetTwin> {
            Box::new(fleet)
        })
    }
}
