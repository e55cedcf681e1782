use retry::retry;

#[retry(attempt_timeout = 2s)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
