//! The expansion names only absolute paths and keeps its locals to itself:
//! a crate with its own `reattempt`, `retry` and `core` modules, glob imports that
//! shadow prelude names, and arguments named like the expansion's locals
//! all work, under `unused_qualifications` and clippy's pedantic lints.

#![deny(unused_qualifications, clippy::pedantic)]
#![allow(clippy::unnecessary_wraps, clippy::trivially_copy_pass_by_ref)]

mod reattempt {}
mod retry {}
mod core {}

#[allow(unused_imports)]
use std::io::*;

use std::cell::Cell;

#[::reattempt::retry(max = 3, backoff = none)]
fn shadowed(
    __retry_call: &Cell<u32>,
    __retry_policy: u32,
    attempt: u32,
    delay: u32,
) -> Result<u32> {
    __retry_call.set(__retry_call.get() + 1);
    if __retry_call.get() < 3 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(__retry_policy + attempt + delay)
}

#[test]
fn arguments_named_like_the_expansions_locals_are_the_users() {
    let calls = Cell::new(0);
    assert_eq!(shadowed(&calls, 1, 2, 3).unwrap(), 6);
    assert_eq!(calls.get(), 3);
}

#[::reattempt::retry(max = 2, backoff = none)]
async fn shadowed_async(__retry_out: &Cell<u32>, __retry_e: u32) -> Result<u32> {
    // A glob import in the body cannot reach the expansion's names.
    #[allow(unused_imports)]
    use std::fmt::*;
    __retry_out.set(__retry_out.get() + 1);
    if __retry_out.get() < 2 {
        return Err(ErrorKind::TimedOut.into());
    }
    Ok(__retry_e)
}

#[tokio::test]
async fn async_bodies_with_glob_imports() {
    let calls = Cell::new(0);
    assert_eq!(shadowed_async(&calls, 9).await.unwrap(), 9);
}

#[::reattempt::retry(max = 2, backoff = none)]
fn pedantic_bodies(n: u32) -> Result<()> {
    if n > 10 {
        return Ok(());
    } else if n > 5 {
        let () = ();
    }
    Ok(())
}

#[test]
fn bodies_ending_in_if_else_and_unit_values() {
    assert!(pedantic_bodies(11).is_ok());
    assert!(pedantic_bodies(6).is_ok());
}
