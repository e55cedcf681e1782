use reattempt::retry;

#[retry(delay = 200ms)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
