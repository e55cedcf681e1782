use reattempt::retry;
use std::future::Future;

async fn fetch_inner() -> std::io::Result<String> {
    Ok(String::new())
}

#[retry(max = 3)]
fn fetch() -> impl Future<Output = std::io::Result<String>> {
    fetch_inner()
}

fn main() {
    let _ = fetch();
}
