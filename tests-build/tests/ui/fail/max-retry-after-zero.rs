use reattempt::retry;

#[retry(max_retry_after = 0s)]
fn f() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
