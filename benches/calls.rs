//! One variant of the overhead benchmark at a time, for measurements that
//! are not timings: instruction counts under callgrind, heap allocations
//! per call, and future sizes. `scripts/bench-counts.sh` drives it.
//!
//! Usage: `calls run GROUP VARIANT N` (N calls, for callgrind), `calls allocs`
//! (allocations per call of every variant), `calls sizes` (future sizes).
//! Run by `cargo bench` with no such arguments, it prints its usage.

#[path = "common/variants.rs"]
mod variants;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::mem::size_of_val;
use std::sync::atomic::{AtomicUsize, Ordering};

use variants::*;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to `System` unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded with the caller's arguments.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Every variant, by group: what `calls variants` lists and `calls allocs`
/// measures.
const VARIANTS: &[(&str, &[&str])] = &[
    (
        "sync",
        &["direct", "reattempt", "backon", "backoff", "retry"],
    ),
    (
        "async",
        &[
            "direct",
            "reattempt",
            "backon",
            "tokio-retry2",
            "backoff",
            "tryhard",
        ],
    ),
    ("sync-once", &["reattempt", "backon", "backoff", "retry"]),
    (
        "async-once",
        &["reattempt", "backon", "tokio-retry2", "backoff", "tryhard"],
    ),
    (
        "async-once-paused",
        &["reattempt", "backon", "tokio-retry2", "backoff", "tryhard"],
    ),
];

/// The suffix of a group whose runtime starts with its clock paused, as
/// the async retry's goal is measured: a wait on tokio's timer then ends
/// as soon as nothing else can run.
const PAUSED: &str = "-paused";

/// Each variant as `group<TAB>variant`.
fn variants() -> impl Iterator<Item = (&'static str, &'static str)> {
    VARIANTS
        .iter()
        .flat_map(|(group, variants)| variants.iter().map(move |variant| (*group, *variant)))
}

fn runtime(paused: bool) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(paused)
        .build()
        .expect("a current-thread runtime")
}

/// Runs `n` calls of one variant of one group.
fn run(group: &str, variant: &str, n: u64) {
    let failed = Cell::new(false);
    let (group, paused) = match group.strip_suffix(PAUSED) {
        Some(group) => (group, true),
        None => (group, false),
    };
    let rt = runtime(paused);
    macro_rules! sync_loop {
        ($call:expr) => {
            for _ in 0..n {
                let _ = black_box($call);
            }
        };
    }
    macro_rules! async_loop {
        ($call:expr) => {
            rt.block_on(async {
                for _ in 0..n {
                    let _ = black_box($call.await);
                }
            })
        };
    }
    match (group, variant) {
        ("sync", "direct") => sync_loop!(direct(black_box(7))),
        ("sync", "reattempt") => sync_loop!(retried(black_box(7))),
        ("sync", "backon") => sync_loop!(backon_sync(black_box(7))),
        ("sync", "backoff") => sync_loop!(backoff_sync(black_box(7))),
        ("sync", "retry") => sync_loop!(retry_sync(black_box(7))),
        ("async", "direct") => async_loop!(direct_async(black_box(7))),
        ("async", "reattempt") => async_loop!(retried_async(black_box(7))),
        ("async", "backon") => async_loop!(backon_async(black_box(7))),
        ("async", "tokio-retry2") => async_loop!(tokio_retry2(black_box(7))),
        ("async", "backoff") => async_loop!(backoff_async(black_box(7))),
        ("async", "tryhard") => async_loop!(tryhard(black_box(7))),
        ("sync-once", "reattempt") => sync_loop!(retried_once(&failed)),
        ("sync-once", "backon") => sync_loop!(backon_once(&failed)),
        ("sync-once", "backoff") => sync_loop!(backoff_once(&failed)),
        ("sync-once", "retry") => sync_loop!(retry_once(&failed)),
        ("async-once", "reattempt") => async_loop!(retried_once_async(&failed)),
        ("async-once", "backon") => async_loop!(backon_once_async(&failed)),
        ("async-once", "tokio-retry2") => async_loop!(tokio_retry2_once(&failed)),
        ("async-once", "backoff") => async_loop!(backoff_once_async(&failed)),
        ("async-once", "tryhard") => async_loop!(tryhard_once(&failed)),
        _ => panic!("unknown variant {group} {variant}"),
    }
}

/// Allocations per call of a steady stream of calls: a run of `2 * CALLS`
/// calls less a run of `CALLS`, over `CALLS`, after a warm-up call. What
/// the thread sets up once (its RNGs, the failure state an async call
/// keeps as the thread's spare) is in neither run; what each run sets up
/// once, however late in the run (its runtime, its timer), is in both.
fn allocations(group: &str, variant: &str) -> f64 {
    const CALLS: u64 = 1_000;
    let allocated = |calls| {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        run(group, variant, calls);
        ALLOCATIONS.load(Ordering::Relaxed) - before
    };
    // What the thread sets up once is in neither run.
    allocated(1);
    let one = allocated(CALLS);
    let two = allocated(2 * CALLS);
    two.saturating_sub(one) as f64 / CALLS as f64
}

fn sizes() {
    let failed = Cell::new(false);
    fn size<F: Future>(future: F) -> usize {
        size_of_val(&future)
    }
    println!("async\tdirect\t{}", size(direct_async(7)));
    println!("async\treattempt\t{}", size(retried_async(7)));
    println!("async\tbackon\t{}", size(backon_async(7)));
    println!("async\ttokio-retry2\t{}", size(tokio_retry2(7)));
    println!("async\tbackoff\t{}", size(backoff_async(7)));
    println!("async\ttryhard\t{}", size(tryhard(7)));
    println!(
        "async-once\treattempt\t{}",
        size(retried_once_async(&failed))
    );
    println!("async-once\tbackon\t{}", size(backon_once_async(&failed)));
    println!(
        "async-once\ttokio-retry2\t{}",
        size(tokio_retry2_once(&failed))
    );
    println!("async-once\tbackoff\t{}", size(backoff_once_async(&failed)));
    println!("async-once\ttryhard\t{}", size(tryhard_once(&failed)));
}

/// A subscriber interested in everything that does nothing with it: what
/// the spans and events of a call cost when someone listens, without the
/// cost of a real subscriber's own work.
struct Listening;

impl tracing::Subscriber for Listening {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn main() {
    // `CALLS_SUBSCRIBER=1`: measure with a subscriber that listens.
    if std::env::var_os("CALLS_SUBSCRIBER").is_some() {
        tracing::subscriber::set_global_default(Listening).expect("the only subscriber");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["run", group, variant, n] => run(group, variant, n.parse().expect("a number of calls")),
        ["allocs"] => {
            for (group, variant) in variants() {
                println!("{group}\t{variant}\t{}", allocations(group, variant));
            }
        }
        ["sizes"] => sizes(),
        ["variants"] => {
            for (group, variant) in variants() {
                println!("{group}\t{variant}");
            }
        }
        _ => eprintln!(
            "usage: calls run GROUP VARIANT N | calls allocs | calls sizes | calls variants"
        ),
    }
}
