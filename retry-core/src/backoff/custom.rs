//! A backoff of the user's (`backoff = EXPR`, or a closure of the retry
//! number), as the expansion holds it.

use core::fmt;
use core::time::Duration;

use super::Backoff;

/// A backoff of the user's, called through its methods, taken where it
/// was checked to be one (`new`). Its type has no bound of its own,
/// so a value that is no backoff is reported once, where it is written:
/// the loop's uses of the type need nothing of the value's.
///
/// Public, under `__private`: it is the type of what the expansion's
/// `backoff_of` and `backoff_fn` give.
#[derive(Clone, Copy)]
pub struct CustomBackoff<B> {
    backoff: B,
    delay: fn(&B, u32) -> Duration,
    max_delay: fn(&B) -> Duration,
}

impl<B: Backoff> CustomBackoff<B> {
    /// `backoff` as the expansion holds it.
    #[inline]
    pub(crate) fn new(backoff: B) -> CustomBackoff<B> {
        CustomBackoff {
            backoff,
            delay: B::delay,
            max_delay: B::max_delay,
        }
    }
}

impl<B> Backoff for CustomBackoff<B> {
    #[inline]
    fn delay(&self, retry: u32) -> Duration {
        (self.delay)(&self.backoff, retry)
    }

    #[inline]
    fn max_delay(&self) -> Duration {
        (self.max_delay)(&self.backoff)
    }
}

impl<B: fmt::Debug> fmt::Debug for CustomBackoff<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.backoff.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Steps;

    impl Backoff for Steps {
        fn delay(&self, retry: u32) -> Duration {
            Duration::from_secs(u64::from(retry))
        }

        fn max_delay(&self) -> Duration {
            Duration::from_secs(9)
        }
    }

    #[test]
    fn a_custom_backoff_gives_what_the_value_gives() {
        let held = CustomBackoff::new(Steps);
        assert_eq!(held.delay(3), Duration::from_secs(3));
        assert_eq!(held.max_delay(), Duration::from_secs(9));
        let closure = CustomBackoff::new(|retry: u32| Duration::from_millis(u64::from(retry)));
        assert_eq!(closure.delay(7), Duration::from_millis(7));
        assert_eq!(closure.max_delay(), Duration::MAX);
    }
}
