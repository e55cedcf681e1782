use reattempt::retry;

#[derive(Debug)]
struct FetchError;

// Reported once, at the error type, as for a sync function.
#[retry(max = 3)]
async fn fetch() -> Result<String, FetchError> {
    Err(FetchError)
}

fn main() {
    let _ = fetch();
}
