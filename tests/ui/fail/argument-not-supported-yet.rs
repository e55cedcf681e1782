use retry::retry;

#[retry(budget = RETRIES)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
