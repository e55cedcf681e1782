use reattempt::retry;

#[retry(max = infinite)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
