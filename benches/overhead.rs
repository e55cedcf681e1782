//! The cost of `#[retry]` against a direct call and against the peer
//! crates (backon, tokio-retry2, backoff, tryhard, retry): on the success
//! path, and for a call that fails once and is retried at once.
//!
//! `cargo bench -p benches --bench overhead`. Async variants run many calls inside one
//! `block_on` of a current-thread runtime, so the runtime's own cost is not
//! counted per call. See BENCHMARKS.md for the figures.

#[path = "common/variants.rs"]
mod variants;

use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::time::Instant;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use variants::*;

/// A current-thread runtime, its clock paused when asked: a wait on
/// tokio's timer then ends as soon as nothing else can run.
fn runtime(paused: bool) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(paused)
        .build()
        .expect("a current-thread runtime")
}

/// Benchmarks `call` as `name` in `group`, timing many awaits of it inside
/// one `block_on`.
fn bench_async<F: Future>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    mut call: impl FnMut() -> F,
) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(call().await);
                }
                start.elapsed()
            })
        })
    });
}

fn success_path(c: &mut Criterion) {
    let mut sync = c.benchmark_group("sync success");
    sync.bench_function("direct", |b| b.iter(|| direct(black_box(7))));
    sync.bench_function("reattempt", |b| b.iter(|| retried(black_box(7))));
    sync.bench_function("backon", |b| b.iter(|| backon_sync(black_box(7))));
    sync.bench_function("backoff", |b| b.iter(|| backoff_sync(black_box(7))));
    sync.bench_function("retry", |b| b.iter(|| retry_sync(black_box(7))));
    sync.finish();

    let rt = runtime(false);
    let mut group = c.benchmark_group("async success");
    bench_async(&mut group, &rt, "direct", || direct_async(black_box(7)));
    bench_async(&mut group, &rt, "reattempt", || retried_async(black_box(7)));
    bench_async(&mut group, &rt, "backon", || backon_async(black_box(7)));
    bench_async(&mut group, &rt, "tokio-retry2", || {
        tokio_retry2(black_box(7))
    });
    bench_async(&mut group, &rt, "backoff", || backoff_async(black_box(7)));
    bench_async(&mut group, &rt, "tryhard", || tryhard(black_box(7)));
    group.finish();
}

fn one_retry(c: &mut Criterion) {
    let failed = Cell::new(false);
    let mut sync = c.benchmark_group("sync one retry");
    sync.bench_function("reattempt", |b| b.iter(|| retried_once(&failed)));
    sync.bench_function("backon", |b| b.iter(|| backon_once(&failed)));
    sync.bench_function("backoff", |b| b.iter(|| backoff_once(&failed)));
    sync.bench_function("retry", |b| b.iter(|| retry_once(&failed)));
    sync.finish();

    for (name, paused) in [
        ("async one retry", false),
        ("async one retry, paused clock", true),
    ] {
        let rt = runtime(paused);
        let mut group = c.benchmark_group(name);
        bench_async(&mut group, &rt, "reattempt", || retried_once_async(&failed));
        bench_async(&mut group, &rt, "backon", || backon_once_async(&failed));
        bench_async(&mut group, &rt, "tokio-retry2", || {
            tokio_retry2_once(&failed)
        });
        bench_async(&mut group, &rt, "backoff", || backoff_once_async(&failed));
        bench_async(&mut group, &rt, "tryhard", || tryhard_once(&failed));
        group.finish();
    }
}

criterion_group!(benches, success_path, one_retry);
criterion_main!(benches);
