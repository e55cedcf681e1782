use reattempt::retry;

#[retry(max = 3, backoff = none(1s))]
fn load() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = load();
}
