use reattempt::retry;

struct Job {
    ready: bool,
}

#[retry(if_result = |job: &Job| !job.ready)]
fn poll() -> Job {
    Job { ready: true }
}

fn main() {
    let _ = poll();
}
