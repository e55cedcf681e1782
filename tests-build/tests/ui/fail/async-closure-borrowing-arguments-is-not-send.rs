// Why an async `#[retry]` function does not make its body one closure that
// every attempt calls, as a sync one does (BENCHMARKS.md, "The async
// success path"): with rustc 1.95, an async closure that borrows the
// function's arguments, called again through `AsyncFnMut`, makes the
// function's future fail `Send`. Should this case start to compile, that
// design can be reconsidered.

async fn attempt_twice<R, A: AsyncFnMut() -> R>(attempt: &mut A) -> R {
    let _ = attempt().await;
    attempt().await
}

async fn fetch(name: &str) -> usize {
    let mut body = async || name.len();
    attempt_twice(&mut body).await
}

fn spawnable<T: Send>(_: T) {}

fn main() {
    spawnable(fetch("example"));
}
