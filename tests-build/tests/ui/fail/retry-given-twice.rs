use reattempt::retry;

#[retry(max = 3)]
#[retry(max = 2, backoff = none)]
fn fetch() -> std::io::Result<u32> {
    Ok(1)
}

#[reattempt::retry(max = 3)]
#[reattempt::retry(max = 2)]
async fn fetch_async() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = (fetch(), fetch_async());
}
