//! The Redis side of a retry breaker shared by the fleet, and how a
//! breaker is shared.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ::redis::{RedisError, Script};

use super::link::{DEFAULT_TIMEOUT, Link};
use super::pending::Pending;
use super::{install, millis, now_ms, slot_of};
use crate::RetryBreaker;
use crate::twin::BreakerTwin;

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
}

// Asserted, as a `BreakerTwin` must be: the breaker keeps its counts in
// atomics and takes every lock past a panic's poison, so a panic leaves
// nothing half-changed that another caller could see.
impl std::panic::RefUnwindSafe for FleetBreaker {}
impl std::panic::UnwindSafe for FleetBreaker {}

impl BreakerTwin for FleetBreaker {
    /// An attempt ended, in the local breaker's slot `index`; on a success
    /// after the breaker was seen open or let a probe through, the fleet's
    /// breaker closes, once its `cool_down` is over.
    fn record(&self, failed: bool, slot_nanos: u64, cool_down: Duration, index: u64) {
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
    fn allow_retry(
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

impl RetryBreaker {
    /// Shares the breaker with every instance that shares one under the
    /// same scope in the same Redis (feature `redis-fleet`; see
    /// [`FleetBreaker`](crate::fleet::FleetBreaker)). A breaker already
    /// shared gives `fleet` back, boxed.
    pub fn share(&self, fleet: FleetBreaker) -> Result<(), Box<FleetBreaker>> {
        install(&self.shared, fleet, |fleet| -> Box<dyn BreakerTwin> {
            Box::new(fleet)
        })
    }
}
