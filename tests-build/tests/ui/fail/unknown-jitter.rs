use reattempt::retry;

#[retry(jitter = random)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
