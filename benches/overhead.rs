//! The cost of `#[retry]` on the success path: the same trivial function
//! called directly and through the attribute, sync and async.
//!
//! `cargo bench --bench overhead`

use std::hint::black_box;
use std::io;

use criterion::{Criterion, criterion_group, criterion_main};
use retry::retry;

#[inline(never)]
fn direct(x: u64) -> io::Result<u64> {
    Ok(black_box(x))
}

#[inline(never)]
#[retry(max = 5, backoff = exp, jitter)]
fn retried(x: u64) -> io::Result<u64> {
    Ok(black_box(x))
}

#[inline(never)]
async fn direct_async(x: u64) -> io::Result<u64> {
    Ok(black_box(x))
}

#[inline(never)]
#[retry(max = 5, backoff = exp, jitter)]
async fn retried_async(x: u64) -> io::Result<u64> {
    Ok(black_box(x))
}

fn success_path(c: &mut Criterion) {
    let mut sync = c.benchmark_group("sync success");
    sync.bench_function("direct", |b| b.iter(|| direct(black_box(7))));
    sync.bench_function("#[retry]", |b| b.iter(|| retried(black_box(7))));
    sync.finish();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let mut asynchronous = c.benchmark_group("async success");
    asynchronous.bench_function("direct", |b| {
        b.iter(|| runtime.block_on(direct_async(black_box(7))))
    });
    asynchronous.bench_function("#[retry]", |b| {
        b.iter(|| runtime.block_on(retried_async(black_box(7))))
    });
    asynchronous.finish();
}

criterion_group!(benches, success_path);
criterion_main!(benches);
