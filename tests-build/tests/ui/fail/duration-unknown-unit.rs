use reattempt::retry;

#[retry(deadline = 5parsecs)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
