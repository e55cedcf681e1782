use reattempt::retry;

#[retry(backoff = exp(base = 2s, max = 500ms))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
