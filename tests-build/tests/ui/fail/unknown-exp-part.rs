use reattempt::retry;

#[retry(backoff = exp(base = 1s, multiplier = 3))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
