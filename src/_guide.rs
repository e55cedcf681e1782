//! The guide: everything `#[retry]` does, one chapter per question.
//!
//! The [crate documentation](crate) is the short tour; these chapters are
//! the reference. Each opens with what it answers, and each example in
//! them runs as a test.
//!
//! - [`arguments`]: every argument, its default, durations, presets.
//! - [`classification`]: which errors are retried, your own error type,
//!   retrying on values.
//! - [`clients`]: reqwest, sqlx, redis, tokio-postgres, `http`, `anyhow`;
//!   client timeouts; connections that die.
//! - [`safe_to_repeat`]: operations that must not happen twice, and
//!   idempotency keys.
//! - [`time`]: deadlines, attempt timeouts, `Retry-After`, timers, jitter.
//! - [`hooks_and_context`]: hooks, their context, and what the body can
//!   learn of its attempt.
//! - [`testing`]: tests of retried code that do not wait.
//! - [`operations`]: budgets, breakers, throttles, fallbacks, limits, dead letters, alerts,
//!   statistics, metrics, run-time policies, nested retries.
//! - [`configuration`]: policies read at run time, from text, JSON, TOML,
//!   a file or Redis, and replaced while calls run; retrying for ever.
//! - [`fleet`]: budgets, breakers, alerts and policies shared through Redis.
//! - [`logs_and_tracing`]: the events, their fields, the spans.
//! - [`how_the_body_runs`]: what the attribute makes of the function.
//! - [`crates_and_features`]: the crates, their dependencies, the features.

#[doc = include_str!("../docs/guide/arguments.md")]
pub mod arguments {}

#[doc = include_str!("../docs/guide/classification.md")]
pub mod classification {}

#[doc = include_str!("../docs/guide/clients.md")]
pub mod clients {}

#[doc = include_str!("../docs/guide/safe_to_repeat.md")]
pub mod safe_to_repeat {}

#[doc = include_str!("../docs/guide/time.md")]
pub mod time {}

#[doc = include_str!("../docs/guide/hooks_and_context.md")]
pub mod hooks_and_context {}

#[doc = include_str!("../docs/guide/testing.md")]
pub mod testing {}

#[doc = include_str!("../docs/guide/operations.md")]
pub mod operations {}

#[doc = include_str!("../docs/guide/configuration.md")]
pub mod configuration {}

#[doc = include_str!("../docs/guide/fleet.md")]
pub mod fleet {}

#[doc = include_str!("../docs/guide/logs_and_tracing.md")]
pub mod logs_and_tracing {}

#[doc = include_str!("../docs/guide/how_the_body_runs.md")]
pub mod how_the_body_runs {}

#[doc = include_str!("../docs/guide/crates_and_features.md")]
pub mod crates_and_features {}
