//! A constant policy named by a type: for a sync function that runs its
//! first attempt before its call is built (`run_sync`), the attribute
//! writes `&ConstPolicy::<B, MAX, ..>::POLICY` for a policy made only of
//! literals and without shared state, instead of a `static` of the
//! function's own.
//!
//! The reference is promoted to a constant, so the optimiser still folds
//! what the policy does not use; and where rustc checks and evaluates each
//! function's `static` item on its own, it checks this type once and
//! evaluates its constant only for each set of values.
//!
//! The parameters are what a `static` would be built from, as numbers:
//! durations in nanoseconds, `f64`s as their bits, [`NONE`] for a value
//! the attribute was not given, which then takes its default here (the
//! attribute knows the markers, never the defaults).

use core::marker::PhantomData;
use core::num::NonZeroU32;
use core::time::Duration;

use crate::backoff::{
    DEFAULT_BASE, DEFAULT_CAP, DEFAULT_FACTOR, Exponential, Fibonacci, Fixed, Linear, NoBackoff,
};
use crate::jitter::Jitter;
use crate::policy::{Idempotent, Nested, Policy};

/// A value not given: its default (a curve's part, `max`,
/// `max_retry_after`), or none at all (no deadline, no attempt timeout).
pub const NONE: u64 = u64::MAX;

/// `JITTER` for no jitter; a `JITTER` that is not one of the four
/// markers is the ratio of `Jitter::Proportional`, as its bits. The markers
/// are NaNs, which no ratio the attribute writes is.
pub const JITTER_NONE: u64 = u64::MAX;
/// `JITTER` for `Jitter::Full`.
pub const JITTER_FULL: u64 = u64::MAX - 1;
/// `JITTER` for `Jitter::Equal`.
pub const JITTER_EQUAL: u64 = u64::MAX - 2;
/// `JITTER` for `Jitter::Decorrelated`.
pub const JITTER_DECORRELATED: u64 = u64::MAX - 3;
/// `JITTER` for the bare `jitter` flag: `Jitter::DEFAULT`.
pub const JITTER_DEFAULT: u64 = u64::MAX - 4;

/// `OPTIONS` bit: server delays are ignored (`retry_after = ignore`).
pub const IGNORE_RETRY_AFTER: u64 = 1;
/// `OPTIONS` bit: one attempt inside another retried call
/// (`nested = single`).
pub const NESTED_SINGLE: u64 = 1 << 1;
/// `OPTIONS` bit: the operation must not happen twice
/// (`idempotent = false`).
pub const NOT_IDEMPOTENT: u64 = 1 << 2;
/// `OPTIONS` bit: the operation sends the call's idempotency key
/// (`idempotent = key`).
pub const IDEMPOTENCY_KEY: u64 = 1 << 3;
/// `OPTIONS` bits from this one up: `alert_after`, or 0 for none.
pub const ALERT_AFTER_SHIFT: u32 = 32;

/// A backoff curve named by a type, for [`ConstPolicy`].
pub trait ConstBackoff {
    /// The curve's type, as a policy holds it.
    type Backoff: 'static;
    /// The curve.
    const BACKOFF: Self::Backoff;
}

impl ConstBackoff for Exponential {
    type Backoff = Exponential;
    const BACKOFF: Exponential = Exponential::DEFAULT;
}

impl ConstBackoff for NoBackoff {
    type Backoff = NoBackoff;
    const BACKOFF: NoBackoff = NoBackoff;
}

/// `nanos` as a duration, or `default` for [`NONE`].
const fn or(nanos: u64, default: Duration) -> Duration {
    if nanos == NONE {
        default
    } else {
        Duration::from_nanos(nanos)
    }
}

/// `Exponential::new(BASE ns, f64::from_bits(FACTOR), MAX ns)`, each part
/// [`NONE`] for its default.
pub struct ExpOf<const BASE: u64, const FACTOR: u64 = NONE, const MAX: u64 = NONE>;

impl<const BASE: u64, const FACTOR: u64, const MAX: u64> ConstBackoff for ExpOf<BASE, FACTOR, MAX> {
    type Backoff = Exponential;
    const BACKOFF: Exponential = Exponential::new(
        or(BASE, DEFAULT_BASE),
        if FACTOR == NONE {
            DEFAULT_FACTOR
        } else {
            f64::from_bits(FACTOR)
        },
        or(MAX, DEFAULT_CAP),
    );
}

/// `Fixed::new(DELAY ns)`.
pub struct FixedOf<const DELAY: u64>;

impl<const DELAY: u64> ConstBackoff for FixedOf<DELAY> {
    type Backoff = Fixed;
    const BACKOFF: Fixed = Fixed::new(Duration::from_nanos(DELAY));
}

/// `Linear::new(BASE ns, STEP ns, MAX ns)`, each part [`NONE`] for its
/// default: the step's is the base.
pub struct LinearOf<const BASE: u64, const STEP: u64 = NONE, const MAX: u64 = NONE>;

impl<const BASE: u64, const STEP: u64, const MAX: u64> ConstBackoff for LinearOf<BASE, STEP, MAX> {
    type Backoff = Linear;
    const BACKOFF: Linear = {
        let base = or(BASE, DEFAULT_BASE);
        Linear::new(base, or(STEP, base), or(MAX, DEFAULT_CAP))
    };
}

/// `Fibonacci::new(BASE ns, MAX ns)`, each part [`NONE`] for its default.
pub struct FibonacciOf<const BASE: u64, const MAX: u64 = NONE>;

impl<const BASE: u64, const MAX: u64> ConstBackoff for FibonacciOf<BASE, MAX> {
    type Backoff = Fibonacci;
    const BACKOFF: Fibonacci = Fibonacci::new(or(BASE, DEFAULT_BASE), or(MAX, DEFAULT_CAP));
}

/// The policy the builder makes from these values, in the order the
/// attribute calls it: `MAX` attempts (0: unbounded), `JITTER` (see
/// [`JITTER_NONE`]), `DEADLINE`, `ATTEMPT_TIMEOUT` and `MAX_RETRY_AFTER` in
/// nanoseconds, and `OPTIONS` (see [`IGNORE_RETRY_AFTER`]). [`NONE`] is a
/// value not given, and the parameters the attribute leaves out are that,
/// so that it writes only what an argument set.
pub struct ConstPolicy<
    B,
    const MAX: u64 = NONE,
    const JITTER: u64 = JITTER_NONE,
    const DEADLINE: u64 = NONE,
    const ATTEMPT_TIMEOUT: u64 = NONE,
    const MAX_RETRY_AFTER: u64 = NONE,
    const OPTIONS: u64 = 0,
>(PhantomData<B>);

impl<
    B: ConstBackoff,
    const MAX: u64,
    const JITTER: u64,
    const DEADLINE: u64,
    const ATTEMPT_TIMEOUT: u64,
    const MAX_RETRY_AFTER: u64,
    const OPTIONS: u64,
> ConstPolicy<B, MAX, JITTER, DEADLINE, ATTEMPT_TIMEOUT, MAX_RETRY_AFTER, OPTIONS>
{
    /// The policy.
    pub const POLICY: Policy<B::Backoff> = {
        let mut policy = Policy::new(B::BACKOFF);
        policy = match MAX {
            NONE => policy,
            0 => policy.unbounded(),
            n => policy.max_attempts(if n > u32::MAX as u64 {
                u32::MAX
            } else {
                n as u32
            }),
        };
        policy = policy.jitter(match JITTER {
            JITTER_NONE => Jitter::None,
            JITTER_DEFAULT => Jitter::DEFAULT,
            JITTER_FULL => Jitter::Full,
            JITTER_EQUAL => Jitter::Equal,
            JITTER_DECORRELATED => Jitter::Decorrelated,
            ratio => Jitter::Proportional(f64::from_bits(ratio)),
        });
        if DEADLINE != NONE {
            policy = policy.deadline(Duration::from_nanos(DEADLINE));
        }
        if ATTEMPT_TIMEOUT != NONE {
            policy = policy.attempt_timeout(Duration::from_nanos(ATTEMPT_TIMEOUT));
        }
        if MAX_RETRY_AFTER != NONE {
            policy = policy.max_retry_after(Duration::from_nanos(MAX_RETRY_AFTER));
        }
        policy = policy.honor_retry_after(OPTIONS & IGNORE_RETRY_AFTER == 0);
        if let Some(after) = NonZeroU32::new((OPTIONS >> ALERT_AFTER_SHIFT) as u32) {
            policy = policy.alert_after(after.get());
        }
        if OPTIONS & NESTED_SINGLE != 0 {
            policy = policy.nested(Nested::Single);
        }
        policy.idempotent(if OPTIONS & NOT_IDEMPOTENT != 0 {
            Idempotent::No
        } else if OPTIONS & IDEMPOTENCY_KEY != 0 {
            Idempotent::Key
        } else {
            Idempotent::Yes
        })
    };
}

/// `ConstPolicy::<..>::REF`, the policy by reference, for each backoff
/// type: a reference in a constant must be to a type known to have no
/// interior mutability, so it is written for each, not once for any `B`.
macro_rules! by_reference {
    ($($name:ident $(<$($param:ident),*>)? => $backoff:ty;)*) => {$(
        impl<
            $($(const $param: u64,)*)?
            const MAX: u64,
            const JITTER: u64,
            const DEADLINE: u64,
            const ATTEMPT_TIMEOUT: u64,
            const MAX_RETRY_AFTER: u64,
            const OPTIONS: u64,
        > ConstPolicy<$name$(<$($param),*>)?, MAX, JITTER, DEADLINE, ATTEMPT_TIMEOUT, MAX_RETRY_AFTER, OPTIONS>
        {
            /// The policy, by reference: evaluated once for each set of
            /// values, where `&ConstPolicy::<..>::POLICY` written in a
            /// function is a constant that rustc evaluates again in each
            /// function.
            pub const REF: &'static Policy<$backoff> = &Self::POLICY;
        }
    )*};
}

by_reference! {
    Exponential => Exponential;
    NoBackoff => NoBackoff;
    ExpOf<BASE, FACTOR, CAP> => Exponential;
    FixedOf<DELAY> => Fixed;
    LinearOf<BASE, STEP, CAP> => Linear;
    FibonacciOf<BASE, CAP> => Fibonacci;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same<B: core::fmt::Debug>(named: &Policy<B>, built: Policy<B>) {
        assert_eq!(format!("{named:?}"), format!("{built:?}"));
    }

    #[test]
    fn the_defaults_are_the_builders() {
        same(
            &ConstPolicy::<Exponential>::POLICY,
            Policy::new(Exponential::DEFAULT),
        );
        same(&ConstPolicy::<NoBackoff>::POLICY, Policy::new(NoBackoff));
    }

    #[test]
    fn every_value_reaches_the_policy() {
        const QUARTER: u64 = 0.25f64.to_bits();
        same(
            &ConstPolicy::<
                ExpOf<2_000_000_000, { 1.5f64.to_bits() }, 20_000_000_000>,
                7,
                QUARTER,
                10_000_000_000,
                3_000_000_000,
                5_000_000_000,
                { IGNORE_RETRY_AFTER | NESTED_SINGLE | NOT_IDEMPOTENT | (4 << ALERT_AFTER_SHIFT) },
            >::POLICY,
            Policy::new(Exponential::new(
                Duration::from_secs(2),
                1.5,
                Duration::from_secs(20),
            ))
            .max_attempts(7)
            .jitter(Jitter::Proportional(0.25))
            .deadline(Duration::from_secs(10))
            .attempt_timeout(Duration::from_secs(3))
            .max_retry_after(Duration::from_secs(5))
            .honor_retry_after(false)
            .alert_after(4)
            .nested(Nested::Single)
            .idempotent(Idempotent::No),
        );
    }

    #[test]
    fn what_the_attribute_was_not_given_takes_the_cores_defaults() {
        same(
            &ConstPolicy::<Exponential>::POLICY,
            Policy::new(Exponential::DEFAULT),
        );
        same(
            &ConstPolicy::<ExpOf<100_000_000>, NONE, JITTER_DEFAULT>::POLICY,
            Policy::new(Exponential::new(
                Duration::from_millis(100),
                DEFAULT_FACTOR,
                DEFAULT_CAP,
            ))
            .jitter(Jitter::DEFAULT),
        );
        same(
            &ConstPolicy::<LinearOf<NONE, NONE, 5_000_000_000>>::POLICY,
            Policy::new(Linear::new(
                DEFAULT_BASE,
                DEFAULT_BASE,
                Duration::from_secs(5),
            )),
        );
        same(
            &ConstPolicy::<FibonacciOf<7>>::POLICY,
            Policy::new(Fibonacci::new(Duration::from_nanos(7), DEFAULT_CAP)),
        );
    }

    #[test]
    fn an_idempotency_key_reaches_the_policy() {
        same(
            &ConstPolicy::<Exponential, 5, JITTER_NONE, NONE, NONE, 60_000_000_000, IDEMPOTENCY_KEY>::POLICY,
            Policy::new(Exponential::DEFAULT).idempotent(Idempotent::Key),
        );
    }

    #[test]
    fn each_curve_and_jitter_is_the_one_named() {
        same(
            &ConstPolicy::<FixedOf<250_000_000>, 0, JITTER_FULL>::POLICY,
            Policy::new(Fixed::new(Duration::from_millis(250)))
                .unbounded()
                .jitter(Jitter::Full),
        );
        same(
            &ConstPolicy::<LinearOf<1, 2, 3>, 2, JITTER_EQUAL>::POLICY,
            Policy::new(Linear::new(
                Duration::from_nanos(1),
                Duration::from_nanos(2),
                Duration::from_nanos(3),
            ))
            .max_attempts(2)
            .jitter(Jitter::Equal),
        );
        same(
            &ConstPolicy::<FibonacciOf<1_000, 9_000>, 3, JITTER_DECORRELATED>::POLICY,
            Policy::new(Fibonacci::new(
                Duration::from_micros(1),
                Duration::from_micros(9),
            ))
            .max_attempts(3)
            .jitter(Jitter::Decorrelated),
        );
    }
}
