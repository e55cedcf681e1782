use reattempt::retry;

#[retry(retries = 3)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
