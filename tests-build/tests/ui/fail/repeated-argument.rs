use reattempt::retry;

#[retry(max = 3, backoff = none, max = 4)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
