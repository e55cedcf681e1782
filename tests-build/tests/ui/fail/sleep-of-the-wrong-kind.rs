// A sleeper that does not fit the function is reported once, at the
// sleeper: a blocking sleep on an async function (it would stop the
// executor's thread), or a future-returning one on a sync function (the
// future would never run). An async function with a deadline also hands
// the sleeper to the timer of its attempts, which the attempt's future
// holds: that future's bound reports it once more, at the attribute.
use reattempt::retry;

#[retry(max = 3, sleep = std::thread::sleep)]
async fn fetch() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, deadline = 5s, sleep = std::thread::sleep)]
async fn fetch_within() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, sleep = tokio::time::sleep)]
fn read() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, on_retry = |_| (), sleep = tokio::time::sleep)]
fn read_seen() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_within();
    let _ = read();
    let _ = read_seen();
}
