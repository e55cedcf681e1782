// Built against `reattempt` without its `tokio` feature: each async
// function here lacks `sleep = ..`, and gets one error at its attribute
// that says so, a hedged one included. The sync one needs no sleeper, and
// compiles.

use std::io;

#[reattempt::retry(max = 3)]
async fn plain(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

#[reattempt::retry(max = 3, deadline = 1s)]
async fn with_a_deadline(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

#[reattempt::retry(max = 3, attempt_timeout = 1s, on_retry = |_| {})]
async fn with_a_hook_and_a_timeout(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

// One attempt: no wait, but the deadline's timer needs a sleeper too.
#[reattempt::retry(max = 1, deadline = 1s)]
async fn one_attempt_with_a_deadline(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

static ONE: reattempt::ConcurrencyLimit = reattempt::ConcurrencyLimit::new(1);

#[reattempt::retry(max = 2, attempt_timeout = 1s, limit = ONE)]
async fn behind_a_limit(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

#[reattempt::retry(max = 3, hedge = 50ms)]
async fn hedged(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

#[reattempt::retry(max = 3)]
fn sync_needs_none(x: u32) -> Result<u32, io::Error> {
    Ok(x)
}

fn main() {
    let _ = (plain(1), with_a_deadline(1), with_a_hook_and_a_timeout(1));
    let _ = (one_attempt_with_a_deadline(1), behind_a_limit(1), hedged(1));
    let _ = sync_needs_none(1);
}
