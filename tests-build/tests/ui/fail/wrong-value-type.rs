use reattempt::retry;

#[retry(max = "3")]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
