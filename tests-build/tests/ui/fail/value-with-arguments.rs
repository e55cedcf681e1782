use reattempt::retry;

#[retry(max = 3, jitter = full(0.5))]
fn load() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = load();
}
