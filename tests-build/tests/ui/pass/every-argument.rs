use reattempt::{Class, retry};
use std::time::Duration;

#[retry(
    on = |e: &std::io::Error| if e.kind() == std::io::ErrorKind::TimedOut { Class::Transient } else { Class::Logical },
    max = 4,
    backoff = exp(base = 100ms, factor = 1.5, max = 2s),
    jitter = decorrelated,
    deadline = 10s,
    clone(name),
    name = "every_argument",
    crate = ::reattempt,
    sleep = std::thread::sleep,
)]
fn every_argument(name: String) -> std::io::Result<usize> {
    let owned: String = name;
    Ok(owned.len())
}

#[retry(max = unbounded, deadline = (Duration::from_secs(1)), backoff = linear(base = 1ms, step = 2ms, max = 1s), jitter)]
fn unbounded() -> std::io::Result<()> {
    Ok(())
}

#[retry(backoff = fibonacci(base = 1us), jitter = equal)]
async fn fib() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = every_argument(String::new());
    let _ = unbounded();
    let _ = fib();
}
