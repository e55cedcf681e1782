use reattempt::retry;

#[retry(crate = 123)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
