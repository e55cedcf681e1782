use reattempt::retry;

#[retry(crate = "not a path")]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
