use reattempt::retry;

#[retry(backoff = exp(base = 0.5))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
