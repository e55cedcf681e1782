use reattempt::retry;

#[retry(max = unbounded, backoff = exp)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
