// A value of the wrong type given to an argument is reported at the
// value: a shared state that is not one, an argument named in `clone(..)`
// that cannot be cloned, a dynamic policy that is not one, an `if_result`
// of another value type, a backoff that is not one or a backoff closure of
// another argument type. Each is reported once: the loop's uses of what
// the value was given to need nothing more of it.
use reattempt::retry;
use std::sync::Mutex;
use std::time::Duration;

static COUNTER: u32 = 5;

#[retry(max = 3, budget = COUNTER)]
async fn budgeted() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, limit = COUNTER)]
fn limited() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, breaker = COUNTER)]
fn broken() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, dead_letter = COUNTER)]
fn recorded() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, backoff = Duration::from_secs(1))]
fn waited() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, clone(guard))]
fn locked(guard: Mutex<u32>) -> std::io::Result<u32> {
    drop(guard);
    Ok(1)
}

#[retry(max = 3, policy = COUNTER)]
fn configured() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, if_result = |value: &String| value.is_empty())]
async fn judged() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, backoff = |retry: u64| Duration::from_secs(retry))]
fn stepped() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = (configured(), judged(), stepped());
    let _ = budgeted();
    let _ = (limited(), broken(), recorded(), waited());
    let _ = locked(Mutex::new(1));
}
