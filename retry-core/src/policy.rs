//! The static description of how a function is retried.

use core::num::NonZeroU32;
use core::time::Duration;

use crate::backoff::Exponential;
use crate::jitter::Jitter;

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
/// use retry::backoff::Fixed;
/// use retry::jitter::Jitter;
/// use retry::Policy;
/// use std::time::Duration;
///
/// const READ: Policy<Fixed> = Policy::new("read", Fixed::new(Duration::from_millis(200)))
///     .max_attempts(3)
///     .jitter(Jitter::Full)
///     .deadline(Duration::from_secs(5));
/// assert_eq!(READ.max(), Some(3));
/// ```
#[derive(Clone, Debug)]
pub struct Policy<B = Exponential> {
    pub(crate) name: &'static str,
    pub(crate) max_attempts: Option<NonZeroU32>,
    pub(crate) backoff: B,
    pub(crate) jitter: Jitter,
    pub(crate) deadline: Option<Duration>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) honor_retry_after: bool,
    pub(crate) max_retry_after: Duration,
}

impl<B> Policy<B> {
    /// Five attempts with the given backoff, no jitter, no deadline, server
    /// delays honoured up to a minute. `name` labels the logs.
    pub const fn new(name: &'static str, backoff: B) -> Policy<B> {
        Policy {
            name,
            // DEFAULT_MAX_ATTEMPTS is not zero.
            max_attempts: NonZeroU32::new(DEFAULT_MAX_ATTEMPTS),
            backoff,
            jitter: Jitter::None,
            deadline: None,
            attempt_timeout: None,
            honor_retry_after: true,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
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

    /// Whether a server-given delay (`Retry-After`) replaces the backoff.
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

    /// The label in logs.
    pub const fn name(&self) -> &'static str {
        self.name
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
