use reattempt::retry;

#[retry(max = 3, timeout = 5s)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
