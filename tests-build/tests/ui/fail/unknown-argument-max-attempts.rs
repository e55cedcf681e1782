use reattempt::retry;

#[retry(max_attempts = 3)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    // The function is still emitted: this call raises no second error.
    let _ = fetch();
}
