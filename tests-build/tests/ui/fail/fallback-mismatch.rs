use reattempt::retry;
use std::io;

// Returns another type than the function.
fn wrong_answer(_: io::Error) -> Option<u32> {
    None
}

#[retry(fallback = wrong_answer)]
fn price(item: u32) -> io::Result<u32> {
    Ok(item)
}

// Takes the argument by value, where a fallback gets it by reference.
fn by_value(_: io::Error, item: u32) -> io::Result<u32> {
    Ok(item)
}

#[retry(fallback = by_value)]
fn price_again(item: u32) -> io::Result<u32> {
    Ok(item)
}

// A closure of another error type.
#[retry(fallback = |error: String| Ok(error.len()))]
fn length() -> io::Result<usize> {
    Ok(0)
}

// No error to hand a fallback.
#[retry(if_result = |n: &Option<u32>| n.is_none(), fallback = |_| Some(0))]
fn lookup() -> Option<u32> {
    Some(1)
}

// An async function's fallback that answers another type.
async fn later(_: io::Error) -> Option<u32> {
    None
}

#[retry(fallback = async later)]
async fn price_later(item: u32) -> io::Result<u32> {
    Ok(item)
}

async fn replica(_: io::Error) -> io::Result<u32> {
    Ok(0)
}

// An `async fn` without `async`: its future is no answer.
#[retry(fallback = replica)]
async fn price_elsewhere(item: u32) -> io::Result<u32> {
    Ok(item)
}

fn cached(_: io::Error) -> io::Result<u32> {
    Ok(0)
}

// Nothing to await in a sync function.
#[retry(fallback = async cached)]
fn price_now(item: u32) -> io::Result<u32> {
    Ok(item)
}

// A closure answers at once: nothing to await.
#[retry(fallback = async |_: io::Error| Ok(0))]
async fn price_soon(item: u32) -> io::Result<u32> {
    Ok(item)
}

fn main() {}
