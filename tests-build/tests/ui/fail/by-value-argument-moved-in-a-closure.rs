// A move the attribute cannot see, into a closure in the body: rustc's own
// error. Without hooks the body is one closure that each attempt calls
// again, so it is E0525 at the move; with a hook, E0382 at the loop.
use reattempt::retry;

#[retry(max = 3)]
fn measure(body: Vec<u8>) -> std::io::Result<usize> {
    let len = move || body.len();
    Ok(len())
}

fn seen(_: &reattempt::hooks::Context<'_, std::io::Result<usize>>) {}

#[retry(max = 3, after = seen)]
fn measure_seen(body: Vec<u8>) -> std::io::Result<usize> {
    let len = move || body.len();
    Ok(len())
}

fn main() {
    let _ = measure(Vec::new());
    let _ = measure_seen(Vec::new());
}
