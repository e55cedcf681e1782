use reattempt::retry;

#[retry(backoff = exp(base = 100ms, factor = 0.5))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
