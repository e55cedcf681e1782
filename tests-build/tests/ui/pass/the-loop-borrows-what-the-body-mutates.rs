//! A body that mutates an argument, beside code of the user's in the loop
//! that reads it: `fields(..)`, a hook closure, a classifier closure,
//! `if_result`. Such functions make a closure per attempt, which borrows
//! the argument only while the attempt runs; a body that is one closure
//! for the whole call would hold it, and these would not compile.

use reattempt::hooks::Context;
use reattempt::retry;

fn flaky(log: &[u32]) -> std::io::Result<usize> {
    if log.len() < 2 {
        return Err(std::io::ErrorKind::ConnectionReset.into());
    }
    Ok(log.len())
}

#[retry(max = 3, backoff = none, fields(log))]
fn recorded(log: &mut Vec<u32>) -> std::io::Result<usize> {
    log.push(1);
    flaky(log)
}

#[retry(max = 3, backoff = none, on = |_: &std::io::Error| limit.is_empty())]
fn classified_by_an_argument(log: &mut Vec<u32>, limit: &mut String) -> std::io::Result<usize> {
    log.push(1);
    limit.push('x');
    flaky(log)
}

#[retry(max = 3, backoff = none, if_result = |n: &usize| *n < total.len())]
fn judged_by_an_argument(log: &mut Vec<u32>, total: &mut Vec<u32>) -> std::io::Result<usize> {
    log.push(1);
    total.push(1);
    flaky(log)
}

struct Counter {
    seen: Vec<u32>,
}

impl Counter {
    #[retry(max = 3, backoff = none, after = |_: &Context<'_, std::io::Result<usize>>| assert!(self.seen.len() < 4))]
    fn count(&mut self) -> std::io::Result<usize> {
        self.seen.push(1);
        flaky(&self.seen)
    }
}

fn main() {
    let mut log = Vec::new();
    let _ = recorded(&mut log);
    let _ = classified_by_an_argument(&mut Vec::new(), &mut String::new());
    let _ = judged_by_an_argument(&mut Vec::new(), &mut Vec::new());
    let _ = Counter { seen: Vec::new() }.count();
}
