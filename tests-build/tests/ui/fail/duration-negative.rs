use reattempt::retry;

#[retry(backoff = fixed(-1s))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
