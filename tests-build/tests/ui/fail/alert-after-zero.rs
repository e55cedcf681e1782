use reattempt::retry;

#[retry(alert_after = 0)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
