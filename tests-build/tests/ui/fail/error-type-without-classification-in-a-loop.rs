// A function whose loop decides each attempt (async, or sync with a hook)
// hands the core its error type's classification: a type without one is
// reported once, at the type, as for a plain sync function.
use reattempt::hooks::Context;
use reattempt::retry;

#[derive(Debug)]
struct FetchError;

fn log_retry(_: &Context<'_, Result<String, FetchError>>) {}

#[retry(max = 3)]
async fn fetch() -> Result<String, FetchError> {
    Err(FetchError)
}

#[retry(max = 3, on_retry = log_retry)]
async fn fetch_with_hook() -> Result<String, FetchError> {
    Err(FetchError)
}

#[retry(max = 3, on_retry = log_retry)]
fn fetch_sync_with_hook() -> Result<String, FetchError> {
    Err(FetchError)
}

fn main() {
    let _ = fetch();
    let _ = fetch_with_hook();
    let _ = fetch_sync_with_hook();
}
