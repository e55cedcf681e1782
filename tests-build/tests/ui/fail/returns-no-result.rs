use reattempt::retry;

#[retry(max = 3)]
fn next_job() -> Option<u32> {
    None
}

fn main() {
    let _ = next_job();
}
