use reattempt::retry;

#[retry(max_retry_after = 120)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
