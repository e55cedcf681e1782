use reattempt::retry;

#[retry(backoff = exp(factor = 1e999))]
fn f() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
