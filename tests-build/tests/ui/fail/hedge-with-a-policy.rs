use reattempt::retry;
use reattempt::dynamic::DynamicPolicy;

fn policy() -> DynamicPolicy {
    DynamicPolicy::new()
}

#[retry(max = 3, hedge = 50ms, policy = policy())]
async fn read() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = read();
}
