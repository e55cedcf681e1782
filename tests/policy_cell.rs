//! A `PolicyCell` replaced while calls run: every call uses one whole
//! policy, the old or the new, never a mix of the two.

use std::cell::RefCell;
use std::io::{self, ErrorKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use reattempt::dynamic::{BackoffSpec, DynamicPolicy, PolicyCell};
use reattempt::retry;

const MS: fn(u64) -> Duration = Duration::from_millis;

const TWO: DynamicPolicy = DynamicPolicy::new()
    .max_attempts(2)
    .backoff(BackoffSpec::Fixed(Duration::from_millis(1)));
const FOUR: DynamicPolicy = DynamicPolicy::new()
    .max_attempts(4)
    .backoff(BackoffSpec::Fixed(Duration::from_millis(3)));

static FLIPPED: PolicyCell = PolicyCell::new(TWO);

thread_local! {
    /// The waits of this thread's current call.
    static WAITS: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

fn record(delay: Duration) {
    WAITS.with_borrow_mut(|waits| waits.push(delay));
}

#[retry(max = 9, backoff = fixed(50ms), sleep = record, policy = FLIPPED)]
fn always_fails(attempts: &mut u32) -> io::Result<()> {
    *attempts += 1;
    Err(ErrorKind::TimedOut.into())
}

const THREADS: usize = 8;
const CALLS: usize = 10_000;

/// 8 threads make 10,000 calls while another flips the cell between two
/// policies every few microseconds: each call's attempts and waits are exactly
/// those of one of them, and both are seen.
#[test]
fn every_call_uses_one_whole_policy_while_the_cell_flips() {
    let done = Arc::new(AtomicBool::new(false));
    let flipper = {
        let done = done.clone();
        thread::spawn(move || {
            let mut flips = 0u64;
            while !done.load(Ordering::Relaxed) {
                for policy in [FOUR, TWO] {
                    FLIPPED.set(policy);
                    flips += 1;
                    thread::sleep(Duration::from_micros(20));
                }
            }
            flips
        })
    };
    let (sender, results) = mpsc::channel();
    for _ in 0..THREADS {
        let sender = sender.clone();
        thread::spawn(move || {
            let mut seen = [0usize; 2];
            for _ in 0..CALLS / THREADS {
                WAITS.with_borrow_mut(Vec::clear);
                let mut attempts = 0;
                always_fails(&mut attempts).unwrap_err();
                let waits = WAITS.with_borrow(Clone::clone);
                match (attempts, waits.as_slice()) {
                    (2, [one]) if *one == MS(1) => seen[0] += 1,
                    (4, [a, b, c]) if [*a, *b, *c] == [MS(3); 3] => seen[1] += 1,
                    other => panic!("a call mixed the policies: {other:?}"),
                }
            }
            sender.send(seen).unwrap();
        });
    }
    drop(sender);
    let mut seen = [0usize; 2];
    for _ in 0..THREADS {
        // Bounded: a worker that hangs or panics fails the test here.
        let counted = results
            .recv_timeout(Duration::from_secs(120))
            .expect("every worker ends within two minutes");
        seen[0] += counted[0];
        seen[1] += counted[1];
    }
    done.store(true, Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert_eq!(seen[0] + seen[1], CALLS);
    assert!(flips > 0);
    assert!(
        seen[0] > 0 && seen[1] > 0,
        "both policies were used while the cell flipped: {seen:?}"
    );
}
