use reattempt::retry;

#[retry(max = 3)]
async fn next_job() -> Option<u32> {
    None
}

#[retry(max = 3, after = |_| {})]
async fn next_job_seen() -> Option<u32> {
    None
}

fn main() {
    let _ = next_job();
    let _ = next_job_seen();
}
