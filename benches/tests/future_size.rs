//! The future of a retried `async fn` holds at most 120 bytes more than the
//! future of the same function without the attribute, and is the smallest
//! of the five crates' futures for the same call (BENCHMARKS.md, "Future
//! size"). Sizes are what rustc lays out, the same on every machine for a
//! given compiler, so a change that grows the future fails here, not only
//! in the table.

#[path = "../common/variants.rs"]
mod variants;

use std::cell::Cell;
use std::future::Future;
use std::mem::size_of_val;

use variants::*;

/// What the attribute may add to the future of the function it wraps.
const MAX_ADDED: usize = 120;

fn size<F: Future>(future: F) -> usize {
    size_of_val(&future)
}

#[test]
fn a_retried_async_fn_adds_at_most_120_bytes_to_its_future() {
    let inner = size(direct_async(7));
    let retried = size(retried_async(7));
    assert_within_max_added(retried, inner);

    let failed = Cell::new(false);
    let inner = size(async { flaky(&failed) });
    let retried = size(retried_once_async(&failed));
    assert_within_max_added(retried, inner);
}

fn assert_within_max_added(retried: usize, inner: usize) {
    assert!(
        retried <= inner + MAX_ADDED,
        "the retried future is {retried} bytes, the function's own {inner}"
    );
}

#[test]
fn a_retried_async_fn_makes_a_smaller_future_than_each_peer() {
    let ours = size(retried_async(7));
    let peers = [
        ("backon", size(backon_async(7))),
        ("tokio-retry2", size(tokio_retry2(7))),
        ("backoff", size(backoff_async(7))),
        ("tryhard", size(tryhard(7))),
    ];
    assert_smaller_than_each(ours, peers);

    let failed = Cell::new(false);
    let ours = size(retried_once_async(&failed));
    let peers = [
        ("backon", size(backon_once_async(&failed))),
        ("tokio-retry2", size(tokio_retry2_once(&failed))),
        ("backoff", size(backoff_once_async(&failed))),
        ("tryhard", size(tryhard_once(&failed))),
    ];
    assert_smaller_than_each(ours, peers);
}

fn assert_smaller_than_each(ours: usize, peers: [(&str, usize); 4]) {
    for (peer, bytes) in peers {
        assert!(ours < bytes, "ours is {ours} bytes, {peer}'s {bytes}");
    }
}
