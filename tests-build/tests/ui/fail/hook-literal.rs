use reattempt::retry;

#[retry(on_retry = "log it")]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
