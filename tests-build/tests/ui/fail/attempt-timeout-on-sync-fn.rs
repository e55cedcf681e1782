use reattempt::retry;

#[retry(max = 3, attempt_timeout = 2s)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
