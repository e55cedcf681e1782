//! Two simulations of retries under load, deterministic for a seed.
//!
//! **The retry storm**: the setup of the AWS Architecture Blog post
//! "Exponential Backoff And Jitter" (2015). N clients each write one row
//! once, under optimistic concurrency: a client reads the row's version,
//! then writes with that version, and the write succeeds only if no other
//! write came first. Every message crosses the network in |Normal(10 ms,
//! 2 ms)|; a client whose write lost waits as its strategy says, then reads
//! again. The delays come from the library's own `Exponential` curve (base
//! 5 ms, factor 2, cap 2 s) and `Jitter`.
//!
//! **The retry budget**: a backend rejecting 95% of requests, called
//! through `#[retry(max = 3)]` with and without a `RetryBudget` of 10%: the
//! load the backend sees, as a multiple of the requests made.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::time::Duration;

use reattempt::backoff::{Backoff, Exponential};
use reattempt::jitter::{Jitter, Rng};
use reattempt::{RetryBudget, retry};

/// How a client waits after a lost write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Reads again at once.
    NoBackoff,
    /// Capped exponential backoff, no jitter.
    Exponential,
    /// A uniform random wait up to the exponential delay.
    Full,
    /// Half the exponential delay plus a uniform random half.
    Equal,
    /// `min(cap, uniform(base, 3·previous))`.
    Decorrelated,
    /// The exponential delay plus up to a quarter of it: the bare `jitter`
    /// flag of `#[retry]`.
    Proportional,
}

impl Strategy {
    /// Every strategy, in the order the tables list them.
    pub const ALL: [Strategy; 6] = [
        Strategy::NoBackoff,
        Strategy::Exponential,
        Strategy::Full,
        Strategy::Equal,
        Strategy::Decorrelated,
        Strategy::Proportional,
    ];

    /// The name in tables and charts.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::NoBackoff => "no backoff",
            Strategy::Exponential => "exponential, no jitter",
            Strategy::Full => "full jitter",
            Strategy::Equal => "equal jitter",
            Strategy::Decorrelated => "decorrelated jitter",
            Strategy::Proportional => "proportional jitter (`jitter`)",
        }
    }

    fn jitter(self) -> Jitter {
        match self {
            Strategy::NoBackoff | Strategy::Exponential => Jitter::None,
            Strategy::Full => Jitter::Full,
            Strategy::Equal => Jitter::Equal,
            Strategy::Decorrelated => Jitter::Decorrelated,
            Strategy::Proportional => Jitter::DEFAULT,
        }
    }
}

/// The backoff of the blog post's simulation: base 5 ms, doubling, capped
/// at 2 s.
pub const CURVE: Exponential =
    Exponential::new(Duration::from_millis(5), 2.0, Duration::from_secs(2));

const NET_MEAN_MS: f64 = 10.0;
const NET_SD_MS: f64 = 2.0;

/// What one simulated contention cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Writes the row's server received, the winning ones included.
    pub calls: f64,
    /// When the last client's write succeeded, in milliseconds.
    pub time_ms: f64,
}

/// The mean cost over `runs` runs of `clients` clients, seeded from `seed`.
pub fn mean_cost(strategy: Strategy, clients: usize, runs: u64, seed: u64) -> Cost {
    let mut total = Cost::default();
    for run in 0..runs {
        let cost = storm(
            strategy,
            clients,
            seed.wrapping_mul(1_000_003).wrapping_add(run),
        );
        total.calls += cost.calls;
        total.time_ms += cost.time_ms;
    }
    Cost {
        calls: total.calls / runs as f64,
        time_ms: total.time_ms / runs as f64,
    }
}

/// A message in flight, delivered at `at` (nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Message {
    at: u64,
    /// The order messages were sent in, so that simultaneous ones are
    /// delivered in a fixed order.
    sent: u64,
    client: usize,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A client's read reaches the server.
    Read,
    /// The server's answer to a read reaches the client.
    ReadReply { version: u64 },
    /// A client's write of `version` reaches the server.
    Write { version: u64 },
    /// The server's answer to a write reaches the client.
    WriteReply { won: bool },
}

struct Client {
    retries: u32,
    previous: Duration,
}

/// One run: every client reads at time 0; the run ends when the last one
/// has written.
pub fn storm(strategy: Strategy, clients: usize, seed: u64) -> Cost {
    let mut rng = Rng::seeded(seed);
    let mut queue = BinaryHeap::new();
    let mut sent = 0;
    let mut send = |queue: &mut BinaryHeap<Reverse<Message>>, at: u64, client, kind| {
        sent += 1;
        queue.push(Reverse(Message {
            at,
            sent,
            client,
            kind,
        }));
    };
    let mut states: Vec<Client> = (0..clients)
        .map(|_| Client {
            retries: 0,
            previous: CURVE.delay(1),
        })
        .collect();
    for client in 0..clients {
        let at = network_delay(&mut rng);
        send(&mut queue, at, client, Kind::Read);
    }

    let (mut version, mut calls, mut now) = (0, 0u64, 0);
    while let Some(Reverse(message)) = queue.pop() {
        now = message.at;
        let at = now + network_delay(&mut rng);
        let client = message.client;
        match message.kind {
            Kind::Read => send(&mut queue, at, client, Kind::ReadReply { version }),
            Kind::ReadReply { version: read } => {
                send(&mut queue, at, client, Kind::Write { version: read })
            }
            Kind::Write { version: seen } => {
                calls += 1;
                let won = seen == version;
                if won {
                    version += 1;
                }
                send(&mut queue, at, client, Kind::WriteReply { won });
            }
            Kind::WriteReply { won: true } => {}
            Kind::WriteReply { won: false } => {
                let state = &mut states[client];
                state.retries += 1;
                let wait = backoff(strategy, state, &mut rng);
                send(&mut queue, at + nanos(wait), client, Kind::Read);
            }
        }
    }
    Cost {
        calls: calls as f64,
        time_ms: now as f64 / 1e6,
    }
}

fn backoff(strategy: Strategy, client: &mut Client, rng: &mut Rng) -> Duration {
    if strategy == Strategy::NoBackoff {
        return Duration::ZERO;
    }
    let delay = CURVE.delay(client.retries);
    let wait = strategy.jitter().apply(
        delay,
        client.previous,
        CURVE.delay(1),
        CURVE.max_delay(),
        rng,
    );
    client.previous = wait;
    wait
}

/// |Normal(10 ms, 2 ms)| in nanoseconds, by the Box–Muller transform.
fn network_delay(rng: &mut Rng) -> u64 {
    let (u1, u2) = (1.0 - rng.next_f64(), rng.next_f64());
    let normal = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    ((NET_MEAN_MS + NET_SD_MS * normal).abs() * 1e6) as u64
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A backend that rejects a share of the requests it gets, at random.
pub struct Backend {
    rejected: f64,
    rng: RefCell<Rng>,
    attempts: Cell<u64>,
}

impl Backend {
    /// A backend rejecting `rejected` (0.95 = 95%) of requests.
    pub fn new(rejected: f64, seed: u64) -> Backend {
        Backend {
            rejected,
            rng: RefCell::new(Rng::seeded(seed)),
            attempts: Cell::new(0),
        }
    }

    fn handle(&self) -> io::Result<()> {
        self.attempts.set(self.attempts.get() + 1);
        if self.rng.borrow_mut().next_f64() < self.rejected {
            // Refused as an overloaded server refuses: transient.
            return Err(io::ErrorKind::ConnectionRefused.into());
        }
        Ok(())
    }

    /// Every attempt it has handled, rejected or not.
    pub fn attempts(&self) -> u64 {
        self.attempts.get()
    }
}

/// Retries may add 10% to the first attempts. The window is long so that
/// the budget sees the whole simulation, which runs in a few milliseconds
/// of real time.
static TEN_PERCENT: RetryBudget = RetryBudget::new(0.1, 0, Duration::from_secs(3600));

fn no_wait(_: Duration) {}

#[retry(max = 3, backoff = none, sleep = no_wait)]
fn request(backend: &Backend) -> io::Result<()> {
    backend.handle()
}

#[retry(max = 3, backoff = none, sleep = no_wait, budget = TEN_PERCENT)]
fn request_with_budget(backend: &Backend) -> io::Result<()> {
    backend.handle()
}

/// The load a backend rejecting 95% of requests sees from `requests`
/// requests of three attempts each, as a multiple of `requests`. The budget
/// is one `static`: call this with `budget` once per process.
pub fn rejection_load(requests: u64, budget: bool, seed: u64) -> f64 {
    let backend = Backend::new(0.95, seed);
    for _ in 0..requests {
        let _ = if budget {
            request_with_budget(&backend)
        } else {
            request(&backend)
        };
    }
    backend.attempts() as f64 / requests as f64
}

/// The load a backend rejecting 95% of requests sees from a fleet of
/// `instances`, each sending `requests` requests of up to three attempts,
/// as a multiple of the requests sent, under each way to hold retries back.
///
/// The retry decision of each request is the one `#[retry]` makes, through
/// the library's own `RetryBudget` and `RetryBreaker`: a budget deposit for
/// each first attempt, a token (or the breaker's leave) for each retry, the
/// breaker told of each attempt's outcome. Per instance, each has a budget
/// of its own, reserve included; shared, one budget holds for the fleet, as
/// `RetryBudget::share` makes it; the breaker is one for the fleet too.
pub fn fleet_load(instances: usize, requests: u64, hold: Hold, seed: u64) -> f64 {
    use reattempt::RetryBreaker;

    let backend = Backend::new(0.95, seed);
    let budget = || RetryBudget::new(0.1, 10, Duration::from_secs(10));
    let own: Vec<RetryBudget> = (0..instances).map(|_| budget()).collect();
    let shared = budget();
    let breaker = RetryBreaker::new(0.5, 20, Duration::from_secs(10), Duration::from_secs(5), 3);
    for _ in 0..requests {
        for instance in &own {
            let budget = match hold {
                Hold::PerInstance => Some(instance),
                Hold::Shared => Some(&shared),
                Hold::None | Hold::Breaker => None,
            };
            if let Some(budget) = budget {
                budget.deposit();
            }
            for attempt in 1..=3 {
                let failed = backend.handle().is_err();
                if hold == Hold::Breaker {
                    breaker.record(failed);
                }
                if !failed || attempt == 3 {
                    break;
                }
                let allowed = match hold {
                    Hold::None => true,
                    Hold::PerInstance | Hold::Shared => {
                        budget.is_some_and(RetryBudget::try_withdraw)
                    }
                    Hold::Breaker => breaker.allow_retry(),
                };
                if !allowed {
                    break;
                }
            }
        }
    }
    backend.attempts() as f64 / (instances as u64 * requests) as f64
}

/// What holds a fleet's retries back in [`fleet_load`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Nothing: every failure is retried, up to three attempts.
    None,
    /// A budget of 10% (and a reserve) in each instance.
    PerInstance,
    /// One budget of 10% (and one reserve) for the fleet.
    Shared,
    /// One retry breaker for the fleet.
    Breaker,
}

impl Hold {
    /// Every way, in the order of the table.
    pub const ALL: [Hold; 4] = [Hold::None, Hold::PerInstance, Hold::Shared, Hold::Breaker];

    /// The row's name.
    pub fn name(self) -> &'static str {
        match self {
            Hold::None => "no budget",
            Hold::PerInstance => "a 10% budget per instance",
            Hold::Shared => "one 10% budget shared by the fleet",
            Hold::Breaker => "one retry breaker for the fleet",
        }
    }
}
