use reattempt::retry;

#[retry(backoff = exponential)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
