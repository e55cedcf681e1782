//! Function shapes that are easy to break when a body is wrapped: generics,
//! lifetimes, patterns, receivers, `impl Trait`, `unsafe`, returned
//! closures, and sync functions that return futures.

use std::cell::Cell;
use std::fmt::Debug;
use std::io::{self, ErrorKind};
use std::str::FromStr;
use std::time::Duration;

use reattempt::retry;

fn no_wait(_: Duration) {}

fn fail_until(calls: &Cell<u32>, n: u32) -> io::Result<u32> {
    calls.set(calls.get() + 1);
    if calls.get() < n {
        Err(ErrorKind::TimedOut.into())
    } else {
        Ok(calls.get())
    }
}

#[retry(max = 3, sleep = no_wait)]
fn parse<T: FromStr>(text: &str, calls: &Cell<u32>) -> io::Result<T>
where
    T::Err: Debug,
{
    fail_until(calls, 2)?;
    text.parse()
        .map_err(|e| io::Error::new(ErrorKind::InvalidData, format!("{e:?}")))
}

#[test]
fn generics_and_where_clauses() {
    let calls = Cell::new(0);
    assert_eq!(parse::<u8>("42", &calls).unwrap(), 42);
    assert_eq!(calls.get(), 2);
    let calls = Cell::new(0);
    let error = parse::<u8>("x", &calls).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidData);
    assert_eq!(calls.get(), 2, "a validation error is not retried");
}

#[retry(max = 3, sleep = no_wait)]
fn longest<'a>(items: &'a [String], calls: &Cell<u32>) -> io::Result<&'a str> {
    fail_until(calls, 2)?;
    items
        .iter()
        .max_by_key(|s| s.len())
        .map(String::as_str)
        .ok_or_else(|| ErrorKind::NotFound.into())
}

#[test]
fn returning_a_borrow_of_a_shared_argument() {
    let items = vec!["a".to_owned(), "abc".to_owned()];
    assert_eq!(longest(&items, &Cell::new(0)).unwrap(), "abc");
}

#[retry(max = 3, sleep = no_wait)]
fn filled<const N: usize>(byte: u8, calls: &Cell<u32>) -> io::Result<[u8; N]> {
    fail_until(calls, 3)?;
    Ok([byte; N])
}

#[test]
fn const_generics() {
    assert_eq!(filled::<4>(7, &Cell::new(0)).unwrap(), [7; 4]);
}

#[retry(max = 3, sleep = no_wait)]
fn sum(values: impl Fn() -> Vec<u32>, calls: &Cell<u32>) -> io::Result<impl Iterator<Item = u32>> {
    fail_until(calls, 2)?;
    let total: u32 = values().iter().sum();
    Ok(std::iter::once(total))
}

#[test]
fn impl_trait_in_argument_and_return_position() {
    let calls = Cell::new(0);
    let mut out = sum(|| vec![1, 2, 3], &calls).unwrap();
    assert_eq!(out.next(), Some(6));
}

#[derive(Clone, Copy)]
struct Point {
    x: i32,
    y: i32,
}

#[retry(max = 3, sleep = no_wait)]
fn patterns(
    (a, b): (u32, u32),
    Point { x, y }: Point,
    mut n: u32,
    _: u8,
    calls: &Cell<u32>,
) -> io::Result<i64> {
    n += 1;
    fail_until(calls, 3)?;
    Ok(i64::from(a + b + n) + i64::from(x * y))
}

#[test]
fn pattern_arguments() {
    let calls = Cell::new(0);
    // `mut n` is incremented by each of the three attempts.
    assert_eq!(
        patterns((1, 2), Point { x: 3, y: 4 }, 10, 0, &calls).unwrap(),
        1 + 2 + 13 + 12
    );
}

/// # Safety
/// `ptr` must be valid for reads.
#[retry(max = 3, sleep = no_wait)]
unsafe fn read_raw(ptr: *const u32, calls: &Cell<u32>) -> io::Result<u32> {
    fail_until(calls, 2)?;
    // SAFETY: the caller guarantees `ptr` is valid.
    Ok(unsafe { *ptr })
}

#[test]
fn unsafe_functions() {
    let value = 9;
    // SAFETY: `value` lives for the call.
    assert_eq!(unsafe { read_raw(&value, &Cell::new(0)) }.unwrap(), 9);
}

#[retry(max = 3, sleep = no_wait)]
fn adder(step: u32, calls: &Cell<u32>) -> io::Result<impl Fn(u32) -> u32> {
    fail_until(calls, 2)?;
    Ok(move |x| x + step)
}

#[retry(max = 3, sleep = no_wait)]
fn boxed_adder(step: u32, calls: &Cell<u32>) -> io::Result<Box<dyn Fn(u32) -> u32>> {
    fail_until(calls, 2)?;
    Ok(Box::new(move |x| x + step))
}

#[test]
fn bodies_that_return_closures() {
    assert_eq!(adder(2, &Cell::new(0)).unwrap()(40), 42);
    assert_eq!(boxed_adder(3, &Cell::new(0)).unwrap()(40), 43);
}

struct Counter {
    calls: Cell<u32>,
    log: Vec<u32>,
}

impl Counter {
    const LIMIT: u32 = 3;

    fn new() -> Counter {
        Counter {
            calls: Cell::new(0),
            log: Vec::new(),
        }
    }

    #[retry(max = 5, sleep = no_wait)]
    fn by_ref(&self) -> io::Result<u32> {
        fail_until(&self.calls, Self::LIMIT)
    }

    #[retry(max = 5, sleep = no_wait)]
    fn by_mut(&mut self) -> io::Result<usize> {
        self.log.push(self.calls.get());
        fail_until(&self.calls, Self::LIMIT)?;
        Ok(self.log.len())
    }

    #[retry(max = 5, sleep = no_wait)]
    #[allow(clippy::boxed_local)]
    fn boxed(self: Box<Self>) -> io::Result<u32> {
        fail_until(&self.calls, Self::LIMIT)
    }

    #[retry(max = 5, sleep = no_wait)]
    fn new_checked() -> io::Result<Self> {
        let counter = Self::new();
        Ok(counter)
    }
}

#[test]
fn methods_with_receivers_self_and_associated_items() {
    assert_eq!(Counter::new().by_ref().unwrap(), 3);
    let mut counter = Counter::new();
    assert_eq!(counter.by_mut().unwrap(), 3);
    assert_eq!(counter.log, [0, 1, 2]);
    assert_eq!(Box::new(Counter::new()).boxed().unwrap(), 3);
    assert!(Counter::new_checked().is_ok());
}

trait Source {
    fn next_value(&self, calls: &Cell<u32>) -> io::Result<u32>;
}

struct Fixed;

impl Source for Fixed {
    #[retry(max = 4, sleep = no_wait)]
    fn next_value(&self, calls: &Cell<u32>) -> io::Result<u32> {
        fail_until(calls, 4)
    }
}

#[test]
fn trait_impl_methods() {
    let source: &dyn Source = &Fixed;
    assert_eq!(source.next_value(&Cell::new(0)).unwrap(), 4);
}

/// A hand-written async function: the retried part is the async block.
#[retry(max = 3, backoff = fixed(1s))]
fn later<'a>(calls: &'a Cell<u32>) -> impl std::future::Future<Output = io::Result<u32>> + 'a {
    async move { fail_until(calls, 3) }
}

#[retry(max = 3, backoff = fixed(1s))]
#[allow(clippy::type_complexity)]
fn later_boxed<'a>(
    calls: &'a Cell<u32>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = io::Result<u32>> + 'a>> {
    Box::pin(async move { fail_until(calls, 3) })
}

/// What comes before the async block runs once, when the future is built,
/// so it may consume a by-value argument; only the block is retried.
#[retry(max = 3, backoff = fixed(1s))]
fn later_labelled<'a>(
    label: String,
    calls: &'a Cell<u32>,
) -> impl std::future::Future<Output = io::Result<(u32, String)>> + 'a {
    let shown = consumed(label);
    async move { fail_until(calls, 3).map(|n| (n, shown.clone())) }
}

fn consumed(label: String) -> String {
    label + "!"
}

/// The block moves the argument: each attempt moves a clone of its own, as
/// the move's compile error advises.
#[retry(max = 3, backoff = fixed(1s), clone(label))]
fn later_consuming<'a>(
    label: String,
    calls: &'a Cell<u32>,
) -> impl std::future::Future<Output = io::Result<(u32, String)>> + 'a {
    async move {
        let shown = consumed(label);
        fail_until(calls, 3).map(|n| (n, shown))
    }
}

#[tokio::test(start_paused = true)]
async fn sync_functions_returning_an_async_block_retry_the_block() {
    let started = tokio::time::Instant::now();
    let calls = Cell::new(0);
    let future = later(&calls);
    assert_eq!(calls.get(), 0, "building the future runs no attempt");
    assert_eq!(future.await.unwrap(), 3);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    let calls = Cell::new(0);
    assert_eq!(later_boxed(&calls).await.unwrap(), 3);
    let calls = Cell::new(0);
    let future = later_labelled("order".to_owned(), &calls);
    assert_eq!(future.await.unwrap(), (3, "order!".to_owned()));
    let calls = Cell::new(0);
    let future = later_consuming("order".to_owned(), &calls);
    assert_eq!(future.await.unwrap(), (3, "order!".to_owned()));
}

#[deny(unused_mut)]
#[retry(max = 2, sleep = no_wait)]
#[inline]
#[must_use = "the reading may have failed"]
/// Attributes before and after `#[retry]` are kept in order.
fn attributed(calls: &Cell<u32>) -> io::Result<u32> {
    #![allow(clippy::needless_return)]
    return fail_until(calls, 2);
}

#[test]
fn attributes_and_inner_attributes_are_kept() {
    assert_eq!(attributed(&Cell::new(0)).unwrap(), 2);
}

// Functions a declarative macro writes: from fragments (the compiler hands
// the attribute a `$body`, a `$ret` or a `$vis` in invisible delimiters),
// or handed over whole.
macro_rules! retried {
    ($vis:vis $name:ident, $calls:ident, $ret:ty, $body:block) => {
        #[retry(max = 3, sleep = no_wait)]
        $vis fn $name($calls: &Cell<u32>) -> $ret $body
    };
}

retried!(pub(crate) from_a_macro, calls, io::Result<u32>, { fail_until(calls, 3) });

#[test]
fn a_function_a_macro_writes_from_fragments() {
    let calls = Cell::new(0);
    assert_eq!(from_a_macro(&calls).unwrap(), 3);
}

macro_rules! retried_item {
    ($f:item) => {
        #[retry(max = 3, sleep = no_wait)]
        $f
    };
}

retried_item! {
    fn from_an_item_fragment(calls: &Cell<u32>) -> io::Result<u32> {
        fail_until(calls, 3)
    }
}

#[test]
fn a_function_a_macro_hands_over_whole() {
    let calls = Cell::new(0);
    assert_eq!(from_an_item_fragment(&calls).unwrap(), 3);
}
