//! Alert streaks counted for the whole fleet, so that one outage raises
//! one alert.

use std::time::Duration;

use ::redis::{RedisError, Script};

use super::install;
use super::link::{DEFAULT_TIMEOUT, Link};
use crate::class::Classification;
use crate::twin::{STREAK_TWIN, StreakTwin};

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
}

impl StreakTwin for FleetAlerts {
    /// A failure of `function` like `class`: the fleet's streak of its kind
    /// (class and code) and whether this instance raises the alert, or
    /// `None` when Redis did not answer.
    fn failure(&self, function: &str, class: &Classification, after: u32) -> Option<(u32, bool)> {
        let kind = format!("{}:{}", class.class().as_str(), class.code().unwrap_or(""));
        let ttl = u64::try_from(STREAK_TTL.as_millis()).unwrap_or(u64::MAX);
        let (count, fire) = self.link.ask(&self.scope, "alert streak", |conn| {
            self.script
                .key(self.prefix(function))
                .arg(kind.as_str())
                .arg(after)
                .arg(ttl)
                .invoke::<(i64, i64)>(conn)
        })?;
        Some((u32::try_from(count).unwrap_or(u32::MAX), fire == 1))
    }

    /// A success of `function`: the fleet's streak ends.
    fn success(&self, function: &str) {
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
    install(&STREAK_TWIN, alerts, |alerts| -> Box<dyn StreakTwin> {
        Box::new(alerts)
    })
}
