use reattempt::retry;

#[retry(idempotent = maybe)]
fn transfer() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
