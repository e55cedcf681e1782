use reattempt::dynamic::DynamicPolicy;
use reattempt::retry;
use std::time::Duration;

#[retry(backoff = |n| Duration::from_millis(u64::from(n)), policy = DynamicPolicy::new())]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
