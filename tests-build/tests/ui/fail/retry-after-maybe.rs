use reattempt::retry;

#[retry(retry_after = maybe)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
