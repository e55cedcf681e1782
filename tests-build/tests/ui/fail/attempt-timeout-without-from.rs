use reattempt::retry;

#[derive(Debug)]
enum FetchError {
    Busy,
}

#[retry(on = |_| true, attempt_timeout = 2s)]
async fn fetch() -> Result<(), FetchError> {
    Err(FetchError::Busy)
}

// With a sleeper of its own too: still one error, at the return type.
#[retry(on = |_| true, attempt_timeout = 2s, sleep = tokio::time::sleep)]
async fn fetch_on_its_sleeper() -> Result<(), FetchError> {
    Err(FetchError::Busy)
}

fn main() {
    let _ = (fetch(), fetch_on_its_sleeper());
}
