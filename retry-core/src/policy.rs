//! The static description of how a function is retried.

use core::num::NonZeroU32;
use core::time::Duration;

use crate::backoff::Exponential;
use crate::breaker::RetryBreaker;
use crate::budget::RetryBudget;
use crate::dead_letter::DeadLetter;
use crate::hedge::Hedge;
use crate::jitter::Jitter;
use crate::limit::ConcurrencyLimit;
use crate::site::Alert;
use crate::throttle::AdaptiveThrottle;

/// Most attempts when `max` is not given.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

/// The longest server-given delay honoured when `max_retry_after` is not
/// given.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How a function is retried: what `#[retry(...)]` builds from its arguments.
///
/// Every builder method is `const`, so a policy can be a `const` or a
/// `static`:
///
/// ```
/// use reattempt::backoff::Fixed;
/// use reattempt::jitter::Jitter;
/// use reattempt::Policy;
/// use std::time::Duration;
///
/// const READ: Policy<Fixed> = Policy::new(Fixed::new(Duration::from_millis(200)))
///     .max_attempts(3)
///     .jitter(Jitter::Full)
///     .deadline(Duration::from_secs(5));
/// assert_eq!(READ.max(), Some(3));
/// ```
#[derive(Clone, Copy)]
pub struct Policy<B = Exponential> {
    pub(crate) max_attempts: Option<NonZeroU32>,
    pub(crate) backoff: B,
    pub(crate) jitter: Jitter,
    pub(crate) deadline: Option<Duration>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) honor_retry_after: bool,
    pub(crate) max_retry_after: Duration,
    pub(crate) budget: Option<&'static RetryBudget>,
    pub(crate) breaker: Option<&'static RetryBreaker>,
    pub(crate) throttle: Option<&'static AdaptiveThrottle>,
    /// Whether a function's `fallback` answers when it gives up: a
    /// dynamic policy may turn it off.
    pub(crate) fallback: bool,
    pub(crate) limit: Option<&'static ConcurrencyLimit>,
    pub(crate) dead_letter: Option<&'static dyn DeadLetter>,
    pub(crate) alert_after: Option<NonZeroU32>,
    pub(crate) on_alert: Option<fn(&Alert)>,
    pub(crate) nested: Nested,
    pub(crate) idempotent: Idempotent,
    /// When a hedged function's attempts get another beside them: its
    /// own `hedge`, as a dynamic policy may have changed it; `None` for a
    /// function that does not hedge, or whose hedging is off.
    pub(crate) hedge: Option<Hedge>,
}

/// Whether an operation may take effect twice: `idempotent = ..`.
///
/// ```
/// use reattempt::{Idempotent, retry};
///
/// #[retry(max = 3, backoff = none, idempotent = key)]
/// fn send() -> std::io::Result<String> {
///     // The same key on every attempt, for the server to deduplicate.
///     Ok(reattempt::attempt().unwrap().call_id().idempotency_key())
/// }
///
/// assert_eq!(send().unwrap().len(), 38);
/// assert_eq!(Idempotent::default(), Idempotent::Yes);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Idempotent {
    /// It may (`idempotent = true`, the default): every transient failure
    /// is retried.
    #[default]
    Yes,
    /// It must not (`idempotent = false`): only failures that show it did
    /// not take effect ([`Applied::No`](crate::Applied::No)) are retried,
    /// and one that may have ends the call with
    /// [`GiveUp::MaybeApplied`](crate::GiveUp::MaybeApplied).
    No,
    /// It sends the call's idempotency key (`idempotent = key`), so the
    /// server deduplicates a repeat: retried as [`Yes`](Idempotent::Yes),
    /// and the key ([`CallId::idempotency_key`](crate::CallId::idempotency_key))
    /// is in the call's log events, its span and its dead-letter record.
    Key,
}

impl Idempotent {
    /// How the logs write it: `true`, `false` or `key`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Idempotent::Yes => "true",
            Idempotent::No => "false",
            Idempotent::Key => "key",
        }
    }
}

/// What a retried call does when it runs inside another retried call:
/// `nested = single` is [`Nested::Single`].
///
/// ```
/// use reattempt::retry;
/// use std::cell::Cell;
///
/// #[retry(max = 3, backoff = none, nested = single)]
/// fn inner(calls: &Cell<u32>) -> std::io::Result<()> {
///     calls.set(calls.get() + 1);
///     Err(std::io::ErrorKind::ConnectionReset.into())
/// }
///
/// #[retry(max = 2, backoff = none)]
/// fn outer(calls: &Cell<u32>) -> std::io::Result<()> {
///     inner(calls)
/// }
///
/// let calls = Cell::new(0);
/// outer(&calls).unwrap_err();
/// assert_eq!(calls.get(), 2, "one attempt of `inner` per attempt of `outer`");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nested {
    /// Retry as usual: the attempts of the layers multiply.
    #[default]
    Allow,
    /// Make one attempt: the outer call's retries are enough.
    Single,
}

/// The default alert threshold when `on_alert` is given without
/// `alert_after`.
pub const DEFAULT_ALERT_AFTER: u32 = 5;

impl<B: core::fmt::Debug> core::fmt::Debug for Policy<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Policy")
            .field("max_attempts", &self.max_attempts)
            .field("backoff", &self.backoff)
            .field("jitter", &self.jitter)
            .field("deadline", &self.deadline)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("honor_retry_after", &self.honor_retry_after)
            .field("max_retry_after", &self.max_retry_after)
            .field("budget", &self.budget.is_some())
            .field("breaker", &self.breaker.is_some())
            .field("throttle", &self.throttle.is_some())
            .field("fallback", &self.fallback)
            .field("limit", &self.limit.is_some())
            .field("dead_letter", &self.dead_letter.is_some())
            .field("alert_after", &self.alert_after)
            .field("nested", &self.nested)
            .field("idempotent", &self.idempotent)
            .field("hedge", &self.hedge)
            .finish()
    }
}

impl<B> Policy<B> {
    /// The function's `hedge`, which its expansion sets: without it a
    /// hedged function's rounds make one attempt each.
    #[doc(hidden)]
    pub const fn hedge(mut self, hedge: Hedge) -> Policy<B> {
        self.hedge = Some(hedge);
        self
    }

    /// Five attempts with the given backoff, no jitter, no deadline, server
    /// delays honoured up to a minute.
    pub const fn new(backoff: B) -> Policy<B> {
        Policy {
            // DEFAULT_MAX_ATTEMPTS is not zero.
            max_attempts: NonZeroU32::new(DEFAULT_MAX_ATTEMPTS),
            backoff,
            jitter: Jitter::None,
            deadline: None,
            attempt_timeout: None,
            honor_retry_after: true,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            budget: None,
            breaker: None,
            throttle: None,
            fallback: true,
            limit: None,
            dead_letter: None,
            alert_after: None,
            on_alert: None,
            nested: Nested::Allow,
            idempotent: Idempotent::Yes,
            hedge: None,
        }
    }

    /// Most times the body runs, the first call included. `1` means no
    /// retry; `0` is read as `1`.
    pub const fn max_attempts(mut self, attempts: u32) -> Policy<B> {
        self.max_attempts = match NonZeroU32::new(attempts) {
            Some(n) => Some(n),
            None => Some(NonZeroU32::MIN),
        };
        self
    }

    /// No limit on the number of attempts; only a [`deadline`](Self::deadline)
    /// (or a permanent error) ends the call.
    pub const fn unbounded(mut self) -> Policy<B> {
        self.max_attempts = None;
        self
    }

    /// The randomisation of each delay.
    pub const fn jitter(mut self, jitter: Jitter) -> Policy<B> {
        self.jitter = jitter;
        self
    }

    /// The total time budget of a call, waits included: no attempt starts
    /// and no wait begins that would end past it.
    pub const fn deadline(mut self, deadline: Duration) -> Policy<B> {
        self.deadline = Some(deadline);
        self
    }

    /// How long one attempt of an async function may run before it is
    /// dropped and counted as a transient timeout.
    pub const fn attempt_timeout(mut self, timeout: Duration) -> Policy<B> {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// Whether a server-given delay (`Retry-After`) is honoured: the wait is
    /// then the longer of it and the backoff's delay.
    pub const fn honor_retry_after(mut self, honor: bool) -> Policy<B> {
        self.honor_retry_after = honor;
        self
    }

    /// The longest server-given delay honoured; a longer one ends the call
    /// at once instead of sleeping.
    pub const fn max_retry_after(mut self, max: Duration) -> Policy<B> {
        self.max_retry_after = max;
        self
    }

    /// Retries draw from `budget`, shared with the other functions naming it.
    pub const fn budget(mut self, budget: &'static RetryBudget) -> Policy<B> {
        self.budget = Some(budget);
        self
    }

    /// Retries stop while `breaker` is open.
    pub const fn breaker(mut self, breaker: &'static RetryBreaker) -> Policy<B> {
        self.breaker = Some(breaker);
        self
    }

    /// Attempts count in `throttle`, which rejects some of them locally
    /// while the backend is overloaded.
    pub const fn throttle(mut self, throttle: &'static AdaptiveThrottle) -> Policy<B> {
        self.throttle = Some(throttle);
        self
    }

    /// Attempts hold a permit of `limit` while they run.
    pub const fn limit(mut self, limit: &'static ConcurrencyLimit) -> Policy<B> {
        self.limit = Some(limit);
        self
    }

    /// Calls that fail for good are recorded in `sink`.
    pub const fn dead_letter(mut self, sink: &'static dyn DeadLetter) -> Policy<B> {
        self.dead_letter = Some(sink);
        self
    }

    /// An alert (an ERROR event, and `on_alert` if set) when the same
    /// failure happens `after` times in a row, across calls; `0` is read as
    /// `1`.
    pub const fn alert_after(mut self, after: u32) -> Policy<B> {
        self.alert_after = match NonZeroU32::new(after) {
            Some(n) => Some(n),
            None => Some(NonZeroU32::MIN),
        };
        self
    }

    /// A function called with each alert, after the ERROR event. Alerts
    /// after [`DEFAULT_ALERT_AFTER`] failures in a row unless `alert_after`
    /// says otherwise.
    pub const fn on_alert(mut self, hook: fn(&Alert)) -> Policy<B> {
        self.on_alert = Some(hook);
        if self.alert_after.is_none() {
            self.alert_after = NonZeroU32::new(DEFAULT_ALERT_AFTER);
        }
        self
    }

    /// Whether the operation may safely happen twice; see [`Idempotent`].
    pub const fn idempotent(mut self, idempotent: Idempotent) -> Policy<B> {
        self.idempotent = idempotent;
        self
    }

    /// What the call does inside another retried call.
    pub const fn nested(mut self, nested: Nested) -> Policy<B> {
        self.nested = nested;
        self
    }

    /// Most attempts, or `None` when unbounded.
    pub const fn max(&self) -> Option<u32> {
        match self.max_attempts {
            Some(n) => Some(n.get()),
            None => None,
        }
    }

    /// The backoff curve.
    pub const fn backoff(&self) -> &B {
        &self.backoff
    }
}
