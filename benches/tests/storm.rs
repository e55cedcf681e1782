//! The retry-storm simulator reproduces the published shape of backoff
//! with jitter, and the retry budget caps the load of a failing backend.
//! A small configuration of `benches/storm` (see BENCHMARKS.md for the
//! full one).

#[path = "../storm/sim.rs"]
mod sim;

#[path = "../storm/hedging.rs"]
mod hedging;

#[path = "../storm/overload.rs"]
mod overload;

use sim::{Cost, Hold, Strategy, fleet_load, mean_cost, rejection_load, storm};

const CLIENTS: usize = 100;
const RUNS: u64 = 20;

fn at_100(strategy: Strategy) -> Cost {
    mean_cost(strategy, CLIENTS, RUNS, 7)
}

#[test]
fn full_jitter_makes_at_most_half_the_calls_of_plain_exponential_backoff() {
    let (full, plain) = (at_100(Strategy::Full), at_100(Strategy::Exponential));
    assert!(full.calls <= plain.calls / 2.0, "{full:?} vs {plain:?}");
}

#[test]
fn full_and_equal_jitter_make_about_as_many_calls() {
    let (full, equal) = (at_100(Strategy::Full), at_100(Strategy::Equal));
    let ratio = equal.calls / full.calls;
    assert!((0.9..=1.1).contains(&ratio), "{full:?} vs {equal:?}");
}

#[test]
fn decorrelated_jitter_makes_more_calls_than_full_jitter() {
    let (full, decorrelated) = (at_100(Strategy::Full), at_100(Strategy::Decorrelated));
    assert!(
        decorrelated.calls > full.calls,
        "{decorrelated:?} vs {full:?}"
    );
}

#[test]
fn plain_exponential_backoff_takes_the_longest_of_the_backoffs() {
    let plain = at_100(Strategy::Exponential);
    for strategy in Strategy::ALL {
        if matches!(strategy, Strategy::Exponential | Strategy::NoBackoff) {
            continue;
        }
        let other = at_100(strategy);
        assert!(
            plain.time_ms > other.time_ms,
            "{}: {other:?} vs {plain:?}",
            strategy.name()
        );
    }
}

#[test]
fn without_backoff_work_grows_with_the_square_of_the_clients() {
    // One winner per round: N + (N-1) + ... writes, about N²/2.
    let small = mean_cost(Strategy::NoBackoff, 20, RUNS, 3).calls;
    let large = mean_cost(Strategy::NoBackoff, 80, RUNS, 3).calls;
    assert!(large / small > 8.0, "{small} -> {large}");
}

#[test]
fn every_client_writes_once_and_a_seed_gives_the_same_run() {
    for strategy in Strategy::ALL {
        let run = storm(strategy, 30, 11);
        assert!(run.calls >= 30.0, "{strategy:?}: {run:?}");
        assert_eq!(run, storm(strategy, 30, 11), "{strategy:?}");
    }
}

#[test]
fn a_ten_percent_budget_holds_the_load_of_a_failing_backend_near_one() {
    // 1 + 0.95 + 0.95² attempts per request without a budget.
    let without = rejection_load(20_000, false, 5);
    assert!((2.8..=2.9).contains(&without), "{without}");
    let with = rejection_load(20_000, true, 5);
    assert!((1.05..=1.12).contains(&with), "{with}");
}

#[test]
fn a_fleet_is_held_back_best_by_one_shared_budget_or_breaker() {
    let load = |hold| fleet_load(50, 200, hold, 3);
    let (none, own, shared, breaker) = (
        load(Hold::None),
        load(Hold::PerInstance),
        load(Hold::Shared),
        load(Hold::Breaker),
    );
    // 1 + 0.95 + 0.95² without anything to hold the retries back.
    assert!((none - 2.85).abs() < 0.05, "{none}");
    // Fifty reserves let through far more than one.
    assert!(own > shared + 0.2, "per instance {own}, shared {shared}");
    // One budget: 10% of the first attempts, plus one reserve of 100.
    assert!(
        shared <= 1.0 + 0.1 * 0.95 + 100.0 / 10_000.0 + 0.02,
        "{shared}"
    );
    // The breaker stops retries once most attempts fail.
    assert!(breaker < shared, "breaker {breaker}, shared {shared}");
    // Every request makes its first attempt, whatever holds retries back.
    for hold in Hold::ALL {
        assert!(load(hold) >= 1.0, "{}", hold.name());
    }
}

#[test]
fn through_a_full_outage_hedges_and_retries_add_no_more_than_the_budget_allows() {
    // One test for both: the attempts are counted in one `static`.
    let without = hedging::outage_load(200, false);
    assert_eq!(without, 3.0, "every call makes all three attempts");
    let with = hedging::outage_load(200, true);
    assert!((1.0..=1.1).contains(&with), "{with}");
}

#[test]
fn an_adaptive_throttle_holds_an_overloaded_backend_to_about_k_requests_per_accept_and_recovers_within_a_window()
 {
    use overload::{OVERLOAD, Protection, WINDOW, run};

    let runs: Vec<_> = Protection::ALL.iter().map(|&p| (p, run(p, 1))).collect();
    let ratio = |p: Protection| {
        runs.iter()
            .find(|(q, _)| *q == p)
            .map(|(_, r)| r)
            .expect("every protection ran")
    };
    let none = ratio(Protection::None).received_per_accepted();
    let budget = ratio(Protection::Budget).received_per_accepted();
    // Every request of `max = 3` against a tenth of the capacity.
    assert!(none > 20.0, "{none}");
    assert!(budget < none / 2.0, "budget {budget}, none {none}");
    // BENCHMARKS.md's figures: 1 + 0.9 + 0.9² attempts a request over a
    // tenth accepted, and a budget's tenth of retries over the same.
    assert!((27.5..=28.5).contains(&none), "{none}");
    assert!((10.5..=11.5).contains(&budget), "{budget}");
    assert_eq!(ratio(Protection::Budget).recovery(1.0), Some(0));
    // The SRE book's goal for K = 2.
    for protection in [Protection::Throttle, Protection::Both] {
        let run = ratio(protection);
        let received = run.received_per_accepted();
        assert!(received <= 2.2, "{}: {received}", protection.name());
        // Back to every request accepted within one window.
        let recovery = run.recovery(1.0).expect("it recovers");
        assert!(recovery <= WINDOW.as_secs(), "{protection:?}: {recovery} s");
        let most = run.recovery(0.9).expect("it recovers");
        assert!(most <= recovery, "{protection:?}: {most} s");
        // While the capacity is a tenth, it accepts what it can.
        let busy = &run.ticks[(OVERLOAD.start + WINDOW.as_secs()) as usize..OVERLOAD.end as usize];
        assert!(busy.iter().all(|t| t.accepted > 0), "{protection:?}");
    }
    // Without the throttle, clients are back at once, as nothing holds
    // them back.
    assert_eq!(ratio(Protection::None).recovery(1.0), Some(0));
    assert_eq!(
        run(Protection::Throttle, 1).ticks.len(),
        runs[2].1.ticks.len()
    );
}
