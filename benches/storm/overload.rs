//! The fifth scenario: 100 clients against a backend with capacity for a
//! tenth of their demand, then for all of it again. Each client is a
//! process of its own, with its own `RetryBudget` and `AdaptiveThrottle`
//! (the library's, driven by the simulation's clock through
//! `AdaptiveThrottle::at`), and makes the decisions `#[retry(max = 3)]`
//! makes: a first attempt unless the throttle rejects it, and a retry of a
//! rejected attempt unless the throttle or the budget stops it.
//!
//! The clock advances a second a tick; in each tick every client sends its
//! requests, interleaved with the others', and the backend accepts as many
//! attempts as its capacity for the tick allows and answers the rest with
//! an overload signal, as a 503 does.

use std::time::Duration;

use reattempt::jitter::Rng;
use reattempt::{AdaptiveThrottle, Classification, RetryBudget};

/// The clients.
pub const CLIENTS: usize = 100;
/// Requests each client sends a tick.
pub const PER_TICK: u64 = 10;
/// The demand of a tick: every client's requests.
pub const DEMAND: u64 = CLIENTS as u64 * PER_TICK;
/// The throttle's window, the SRE book's two minutes.
pub const WINDOW: Duration = Duration::from_secs(120);
/// When the backend loses nine tenths of its capacity, and when it gets it
/// back, in ticks (seconds).
pub const OVERLOAD: std::ops::Range<u64> = 120..600;
/// The ticks simulated.
pub const TICKS: u64 = 900;

/// What holds the clients back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Every attempt `max = 3` allows.
    None,
    /// A `RetryBudget` of 10% per client.
    Budget,
    /// An `AdaptiveThrottle` with K = 2 per client.
    Throttle,
    /// Both.
    Both,
}

impl Protection {
    /// Every protection, as the tables list them.
    pub const ALL: [Protection; 4] = [
        Protection::None,
        Protection::Budget,
        Protection::Throttle,
        Protection::Both,
    ];

    /// The name the tables give it.
    pub fn name(self) -> &'static str {
        match self {
            Protection::None => "no protection",
            Protection::Budget => "`RetryBudget` of 10%",
            Protection::Throttle => "`AdaptiveThrottle`, K = 2",
            Protection::Both => "both",
        }
    }

    fn budget(self) -> bool {
        matches!(self, Protection::Budget | Protection::Both)
    }

    fn throttle(self) -> bool {
        matches!(self, Protection::Throttle | Protection::Both)
    }
}

/// One tick as the backend saw it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tick {
    /// Attempts the backend received.
    pub received: u64,
    /// Attempts it accepted.
    pub accepted: u64,
}

/// What a run under one protection gives.
#[derive(Clone, Debug)]
pub struct Run {
    /// Each tick, from the first.
    pub ticks: Vec<Tick>,
}

impl Run {
    /// Attempts the backend received per attempt it accepted, over the
    /// overload's ticks after its first window (the steady state).
    pub fn received_per_accepted(&self) -> f64 {
        let start = OVERLOAD.start + WINDOW.as_secs();
        let steady = &self.ticks[start as usize..OVERLOAD.end as usize];
        let received: u64 = steady.iter().map(|t| t.received).sum();
        let accepted: u64 = steady.iter().map(|t| t.accepted).sum();
        received as f64 / accepted as f64
    }

    /// Seconds from the capacity's return to the first tick in which the
    /// backend accepted at least `share` of the demand (1.0: every
    /// request), or `None` if none did.
    pub fn recovery(&self, share: f64) -> Option<u64> {
        self.ticks[OVERLOAD.end as usize..]
            .iter()
            .position(|tick| tick.accepted as f64 >= share * DEMAND as f64)
            .map(|ticks| ticks as u64)
    }
}

/// The backend's capacity in tick `tick`: a tenth of the demand during the
/// overload, else ten times it.
fn capacity(tick: u64) -> u64 {
    if OVERLOAD.contains(&tick) {
        DEMAND / 10
    } else {
        DEMAND * 10
    }
}

/// A client: its budget and its throttle.
struct Client {
    budget: RetryBudget,
    throttle: AdaptiveThrottle,
}

/// The run of `protection`, seeded with `seed`.
pub fn run(protection: Protection, seed: u64) -> Run {
    let clients: Vec<Client> = (0..CLIENTS)
        .map(|_| Client {
            // The window is long so that the budget, which keeps real time,
            // sees the whole simulation, which runs in moments.
            budget: RetryBudget::new(0.1, 0, Duration::from_secs(3600)),
            throttle: AdaptiveThrottle::new(2.0, WINDOW),
        })
        .collect();
    // A 503: an overload signal.
    let overloaded: Classification = reattempt::http::status(503);
    let mut rng = Rng::seeded(seed);
    let mut ticks = Vec::with_capacity(TICKS as usize);
    for tick in 0..TICKS {
        let now = Duration::from_secs(tick);
        let mut left = capacity(tick);
        let mut seen = Tick::default();
        for round in 0..PER_TICK {
            // Each round starts at another client, so that none is always
            // first to the capacity.
            let first = (tick * PER_TICK + round) as usize % CLIENTS;
            for offset in 0..CLIENTS {
                let client = &clients[(first + offset) % CLIENTS];
                let throttle = client.throttle.at(now);
                for attempt in 1..=3 {
                    if protection.throttle() && !throttle.allows(rng.next_f64()) {
                        break;
                    }
                    // As a call deposits: for a first attempt that goes
                    // out (a rejected one takes its deposit back).
                    if attempt == 1 && protection.budget() {
                        client.budget.deposit();
                    }
                    if attempt > 1 && protection.budget() && !client.budget.try_withdraw() {
                        break;
                    }
                    seen.received += 1;
                    if left > 0 {
                        left -= 1;
                        seen.accepted += 1;
                        throttle.succeeded();
                        break;
                    }
                    throttle.failed(&overloaded);
                }
            }
        }
        ticks.push(seen);
    }
    Run { ticks }
}
