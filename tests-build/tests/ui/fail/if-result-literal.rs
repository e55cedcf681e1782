use reattempt::retry;

#[retry(if_result = false)]
fn poll() -> Option<u32> {
    None
}

fn main() {
    let _ = poll();
}
