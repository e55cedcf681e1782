use reattempt::retry;

#[retry(jitter = proportional(1.5))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
