//! The cost of `#[retry]` against a direct call and against the peer
//! crates (backon, tokio-retry2, backoff, tryhard): on the success path,
//! and for a call that fails once and is retried at once.
//!
//! `cargo bench --bench overhead`. Async variants run many calls inside one
//! `block_on` of a current-thread runtime, so the runtime's own cost is not
//! counted per call. See BENCHMARKS.md for the figures.

#[path = "common/variants.rs"]
mod variants;

use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use variants::*;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

/// Times `iters` awaits of `call` inside one `block_on`.
fn many<F: Future>(
    runtime: &tokio::runtime::Runtime,
    iters: u64,
    mut call: impl FnMut() -> F,
) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    })
}

fn success_path(c: &mut Criterion) {
    let mut sync = c.benchmark_group("sync success");
    sync.bench_function("direct", |b| b.iter(|| direct(black_box(7))));
    sync.bench_function("#[retry]", |b| b.iter(|| retried(black_box(7))));
    sync.bench_function("backon", |b| b.iter(|| backon_sync(black_box(7))));
    sync.bench_function("backoff", |b| b.iter(|| backoff_sync(black_box(7))));
    sync.finish();

    let rt = runtime();
    let mut asynchronous = c.benchmark_group("async success");
    asynchronous.bench_function("direct", |b| {
        b.iter_custom(|n| many(&rt, n, || direct_async(black_box(7))))
    });
    asynchronous.bench_function("#[retry]", |b| {
        b.iter_custom(|n| many(&rt, n, || retried_async(black_box(7))))
    });
    asynchronous.bench_function("backon", |b| {
        b.iter_custom(|n| many(&rt, n, || backon_async(black_box(7))))
    });
    asynchronous.bench_function("tokio-retry2", |b| {
        b.iter_custom(|n| many(&rt, n, || tokio_retry2(black_box(7))))
    });
    asynchronous.bench_function("backoff", |b| {
        b.iter_custom(|n| many(&rt, n, || backoff_async(black_box(7))))
    });
    asynchronous.bench_function("tryhard", |b| {
        b.iter_custom(|n| many(&rt, n, || tryhard(black_box(7))))
    });
    asynchronous.finish();
}

fn one_retry(c: &mut Criterion) {
    let failed = Cell::new(false);
    let mut sync = c.benchmark_group("sync one retry");
    sync.bench_function("#[retry]", |b| b.iter(|| retried_once(&failed)));
    sync.bench_function("backon", |b| b.iter(|| backon_once(&failed)));
    sync.bench_function("backoff", |b| b.iter(|| backoff_once(&failed)));
    sync.finish();

    let rt = runtime();
    let mut asynchronous = c.benchmark_group("async one retry");
    asynchronous.bench_function("#[retry]", |b| {
        b.iter_custom(|n| many(&rt, n, || retried_once_async(&failed)))
    });
    asynchronous.bench_function("backon", |b| {
        b.iter_custom(|n| many(&rt, n, || backon_once_async(&failed)))
    });
    asynchronous.bench_function("tokio-retry2", |b| {
        b.iter_custom(|n| many(&rt, n, || tokio_retry2_once(&failed)))
    });
    asynchronous.bench_function("backoff", |b| {
        b.iter_custom(|n| many(&rt, n, || backoff_once_async(&failed)))
    });
    asynchronous.bench_function("tryhard", |b| {
        b.iter_custom(|n| many(&rt, n, || tryhard_once(&failed)))
    });
    asynchronous.finish();
}

criterion_group!(benches, success_path, one_retry);
criterion_main!(benches);
