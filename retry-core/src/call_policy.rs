//! The policy of one call of a function with `policy = ..`: the dynamic
//! policy it evaluates to, over the function's static arguments, or those
//! alone when it is invalid.

use crate::dynamic::{AnyBackoff, DynamicPolicy};
use crate::policy::Policy;
use crate::stats::Site;

/// The policy of one call under `policy = ...`: the dynamic policy over the
/// static arguments, or those alone (with a WARN, once) when it is invalid.
/// `cuts`: whether the function's attempts can be cut, which a dynamic
/// `attempt_timeout` needs.
#[inline]
pub fn dynamic_policy<T: PolicySource>(
    base: &Policy<AnyBackoff>,
    dynamic: T,
    site: &Site,
    cuts: bool,
) -> Policy<AnyBackoff> {
    resolve(base, dynamic.borrow(), site, cuts)
}

/// What `policy = ...` evaluates to: a `DynamicPolicy`, or what lends one
/// by `Borrow` (a reference, a `Box`, an `Arc`).
#[diagnostic::on_unimplemented(
    message = "`policy = ..` takes a `reattempt::dynamic::DynamicPolicy`, not `{Self}`",
    label = "not a dynamic policy",
    note = "the expression is evaluated on every call; it may give the policy itself, a reference to one, or an `Arc<DynamicPolicy>`"
)]
pub trait PolicySource: core::borrow::Borrow<DynamicPolicy> {}

impl<T: core::borrow::Borrow<DynamicPolicy>> PolicySource for T {}

/// The kind under which a dynamic `attempt_timeout` that the function
/// cannot honour is logged, after [`InvalidPolicy`]'s.
const TIMEOUT_LEFT_OUT: u32 = 7;

/// The policy of one call: the dynamic one when valid, else the static one
/// with a WARN, once per kind of problem (the first value of each kind is
/// the one logged). Where attempts cannot be cut (`cuts` is false: a sync
/// function, or an error type that cannot stand for a timeout), a dynamic
/// `attempt_timeout` is left out, with a WARN once, and the rest applies.
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
