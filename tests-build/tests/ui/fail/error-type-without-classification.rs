use reattempt::retry;

#[derive(Debug)]
struct FetchError;

#[retry(max = 3)]
fn fetch() -> Result<String, FetchError> {
    Err(FetchError)
}

fn main() {
    let _ = fetch();
}
