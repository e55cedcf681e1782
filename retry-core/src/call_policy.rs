//! The policy of one call of a function with `policy = ..`: the dynamic
//! policy it evaluates to, over the function's static arguments, or those
//! alone when it is invalid.

use crate::dynamic::{AnyBackoff, DynamicPolicy, PolicyCell};
use crate::policy::Policy;
use crate::site::Site;

/// The policy of one call under `policy = ...`: the dynamic policy over the
/// static arguments, or those alone (with a WARN, once) when it is invalid.
/// `cuts`: whether the function's attempts can be cut, which a dynamic
/// `attempt_timeout` needs. A dynamic `hedge` applies to the function's
/// own, where `base` has one.
#[inline]
pub fn dynamic_policy<T: PolicySource + ?Sized>(
    base: &Policy<AnyBackoff>,
    dynamic: &T,
    site: &Site,
    cuts: bool,
) -> Policy<AnyBackoff> {
    dynamic.read(|policy| resolve(base, policy, site, cuts))
}

/// What `policy = ...` evaluates to: a [`DynamicPolicy`], a
/// [`PolicyCell`], or a reference, `Box` or `Arc` of one.
#[diagnostic::on_unimplemented(
    message = "`policy = ..` takes a `reattempt::dynamic::DynamicPolicy` or a `PolicyCell`, not `{Self}`",
    label = "not a dynamic policy",
    note = "the expression is evaluated on every call; it may give a policy, a `static` `PolicyCell`, a reference to either, or an `Arc` of either",
    note = "text becomes a policy with `.parse::<reattempt::dynamic::DynamicPolicy>()`: parse it once, where it is read, and keep it in a `PolicyCell`"
)]
pub trait PolicySource {
    /// `f` of the policy this call uses, whole: the policy itself where
    /// it is one, a copy where it can change while the call runs.
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R;
}

impl PolicySource for DynamicPolicy {
    #[inline]
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R {
        f(self)
    }
}

impl PolicySource for PolicyCell {
    #[inline]
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R {
        f(&self.get())
    }
}

#[diagnostic::do_not_recommend]
impl<T: PolicySource + ?Sized> PolicySource for &T {
    #[inline]
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R {
        (**self).read(f)
    }
}

impl<T: PolicySource + ?Sized> PolicySource for Box<T> {
    #[inline]
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R {
        (**self).read(f)
    }
}

impl<T: PolicySource + ?Sized> PolicySource for std::sync::Arc<T> {
    #[inline]
    fn read<R>(&self, f: impl FnOnce(&DynamicPolicy) -> R) -> R {
        (**self).read(f)
    }
}

/// The kind under which a dynamic `attempt_timeout` that the function
/// cannot honour is logged, after [`InvalidPolicy`]'s.
const TIMEOUT_LEFT_OUT: u32 = 7;

/// The kind under which a dynamic `hedge` for a function that does not
/// hedge is logged, after the log's own kinds.
const HEDGE_LEFT_OUT: u32 = 9;

/// The kind under which dynamic throttle settings for a function that
/// names no throttle are logged.
const THROTTLE_LEFT_OUT: u32 = 11;

/// The policy of one call: the dynamic one when valid, else the static one
/// with a WARN, once per kind of problem (the first value of each kind is
/// the one logged). Where attempts cannot be cut (`cuts` is false: a sync
/// function, or an error type that cannot stand for a timeout), a dynamic
/// `attempt_timeout` is left out, with a WARN once, and the rest applies;
/// so is a dynamic `hedge` where the function does not hedge (`base` has
/// no hedge): a dynamic policy never turns hedging on.
fn resolve(
    base: &Policy<AnyBackoff>,
    dynamic: &DynamicPolicy,
    site: &Site,
    cuts: bool,
) -> Policy<AnyBackoff> {
    match dynamic.apply(base) {
        Ok(mut policy) => {
            if !cuts && dynamic.attempt_timeout.is_some() {
                if site.first_time(TIMEOUT_LEFT_OUT) {
                    tracing::warn!(
                        target: "reattempt",
                        function = site.name(),
                        reason = "its attempts cannot be cut: attempt_timeout needs an async \
                                  function whose error type has From<AttemptTimeout>",
                        "dynamic attempt_timeout left out",
                    );
                }
                policy.attempt_timeout = base.attempt_timeout;
            }
            // `apply` applied it to no hedge: say so, once.
            if base.hedge.is_none() && dynamic.hedge.is_some() && site.first_time(HEDGE_LEFT_OUT) {
                tracing::warn!(
                    target: "reattempt",
                    function = site.name(),
                    reason = "the function does not hedge: a dynamic policy can turn \
                              hedging off or change its delay, not turn it on",
                    "dynamic hedge left out",
                );
            }
            let tuned = dynamic.throttle_k.is_some() || dynamic.throttle_window.is_some();
            match base.throttle {
                Some(throttle) if tuned => {
                    throttle.tune(dynamic.throttle_k, dynamic.throttle_window)
                }
                None if tuned && site.first_time(THROTTLE_LEFT_OUT) => tracing::warn!(
                    target: "reattempt",
                    function = site.name(),
                    reason = "the function names no throttle",
                    "dynamic throttle_k and throttle_window left out",
                ),
                _ => {}
            }
            policy
        }
        Err(problem) => {
            if site.first_time(problem.kind()) {
                tracing::warn!(
                    target: "reattempt",
                    function = site.name(),
                    problem = %problem,
                    "invalid dynamic policy; using the static arguments",
                );
            }
            *base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamic::InvalidPolicy;
    use core::time::Duration;

    #[test]
    fn each_warning_said_once_has_a_kind_of_its_own() {
        // A kind shared by two warnings would let the first said silence
        // the other for the function's life.
        let mut kinds = vec![
            InvalidPolicy::ZeroAttempts.kind(),
            InvalidPolicy::Factor(0.5).kind(),
            InvalidPolicy::CapBelowBase {
                base: Duration::from_secs(2),
                max: Duration::from_secs(1),
            }
            .kind(),
            InvalidPolicy::JitterRatio(2.0).kind(),
            InvalidPolicy::Zero("deadline").kind(),
            InvalidPolicy::TooManyAttemptsWithoutDeadline(5_000).kind(),
            InvalidPolicy::Percentile(100).kind(),
            InvalidPolicy::Throttle(crate::throttle::InvalidThrottle::Window).kind(),
            THROTTLE_LEFT_OUT,
            TIMEOUT_LEFT_OUT,
            HEDGE_LEFT_OUT,
            crate::log::RETRYING_FOR_EVER,
        ];
        let said = kinds.len();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), said, "{kinds:?}");
    }
}
