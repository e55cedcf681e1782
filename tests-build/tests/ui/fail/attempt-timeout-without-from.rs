use reattempt::retry;

#[derive(Debug)]
enum FetchError {
    Busy,
}

#[retry(on = |_| true, attempt_timeout = 2s)]
async fn fetch() -> Result<(), FetchError> {
    Err(FetchError::Busy)
}

fn main() {
    let _ = fetch();
}
