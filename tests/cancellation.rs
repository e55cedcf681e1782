//! Calls dropped at any await give back what they took: budget tokens of
//! retries that never ran, and permits; and every call dropped after any
//! number of polls is counted once, as cancelled, with nothing left behind.

use std::cell::Cell;
use std::io::{self, ErrorKind};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use reattempt::{ConcurrencyLimit, RetryBudget, retry};

static WAITS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

#[retry(max = 5, backoff = fixed(10s), budget = WAITS)]
async fn fails_then_waits() -> io::Result<()> {
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_during_its_wait_gives_its_budget_token_back() {
    for _ in 0..100 {
        let cut = tokio::time::timeout(Duration::from_secs(1), fails_then_waits()).await;
        assert!(cut.is_err(), "each call is dropped during its first wait");
    }
    // 100 first attempts deposited 100 tokens; each call took one for its
    // retry and gave it back when dropped.
    assert_eq!(WAITS.available(), 100.0);
    let stats = reattempt::stats::get("cancellation::fails_then_waits").unwrap();
    assert_eq!((stats.cancelled, stats.attempts), (100, 100));
}

static QUEUE: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);

#[retry(max = 3, backoff = fixed(1s), budget = QUEUE, limit = ONE)]
async fn retried_behind_a_permit(hold: bool) -> io::Result<()> {
    if hold {
        std::future::pending::<()>().await;
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_queued_for_a_permit_gives_its_budget_token_back() {
    let retried = tokio::spawn(tokio::time::timeout(
        Duration::from_secs(5),
        retried_behind_a_permit(false),
    ));
    // The first attempt fails at once; while it waits out its second, a
    // call that never ends takes the only permit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let holder = tokio::spawn(retried_behind_a_permit(true));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(ONE.in_use(), 1);
    assert!(retried.await.unwrap().is_err(), "cut while queued");
    holder.abort();
    let _ = holder.await;
    assert_eq!(ONE.in_use(), 0);
    // Two first attempts deposited two tokens; the queued retry took one and
    // gave it back.
    assert_eq!(QUEUE.available(), 2.0);
}

static HEDGED_QUEUE: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static HEDGED_ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// As `retried_behind_a_permit`, hedged (the hedge never comes due).
#[retry(max = 3, backoff = fixed(1s), hedge = 10s, budget = HEDGED_QUEUE, limit = HEDGED_ONE)]
async fn hedged_behind_a_permit(hold: bool) -> io::Result<()> {
    if hold {
        std::future::pending::<()>().await;
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_dropped_while_its_retry_is_queued_for_a_permit_gives_its_budget_token_back()
{
    let retried = tokio::spawn(tokio::time::timeout(
        Duration::from_secs(5),
        hedged_behind_a_permit(false),
    ));
    // The first attempt fails at once; while it waits out its second, a
    // call that never ends takes the only permit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let holder = tokio::spawn(hedged_behind_a_permit(true));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(HEDGED_ONE.in_use(), 1);
    assert!(retried.await.unwrap().is_err(), "cut while queued");
    holder.abort();
    let _ = holder.await;
    assert_eq!(HEDGED_ONE.in_use(), 0);
    // As unhedged: two first attempts deposited two tokens; the queued
    // retry took one and gave it back.
    assert_eq!(HEDGED_QUEUE.available(), 2.0);
    // Two bodies ran, one per call: the retry that never left the queue
    // is no attempt.
    let stats = counted("hedged_behind_a_permit");
    assert_eq!(
        (stats.calls, stats.cancelled, stats.attempts, stats.hedges),
        (2, 2, 2, 0)
    );
}

static HEDGE_HOOK_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// A slow first attempt; the `before` hook of its hedge never ends.
#[retry(
    max = 3,
    backoff = none,
    hedge = 50ms,
    budget = HEDGE_HOOK_TOKENS,
    before = |c| {
        let hedge = c.is_hedge();
        async move {
            if hedge {
                std::future::pending::<()>().await;
            }
        }
    },
)]
async fn hedge_held_in_its_hook() -> io::Result<()> {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_dropped_in_the_hook_before_a_hedge_gives_the_hedges_token_back() {
    let cut = tokio::time::timeout(Duration::from_secs(1), hedge_held_in_its_hook()).await;
    assert!(cut.is_err(), "cut in the hook before the hedge");
    // The first attempt deposited a token; the hedge took it and, never
    // having run, gave it back.
    assert_eq!(HEDGE_HOOK_TOKENS.available(), 1.0);
    let stats = counted("hedge_held_in_its_hook");
    assert_eq!(
        (stats.calls, stats.cancelled, stats.attempts, stats.hedges),
        (1, 1, 1, 0)
    );
}

static DEADLINE_QUEUE: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static DEADLINE_ONE: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// As `hedged_behind_a_permit`, with a deadline that ends the round while
/// its retry waits for the permit.
#[retry(
    max = 3,
    backoff = fixed(1s),
    hedge = 10s,
    deadline = 3s,
    budget = DEADLINE_QUEUE,
    limit = DEADLINE_ONE
)]
async fn hedged_behind_a_permit_until_the_deadline(hold: bool) -> io::Result<()> {
    if hold {
        std::future::pending::<()>().await;
    }
    Err(ErrorKind::ConnectionReset.into())
}

#[tokio::test(start_paused = true)]
async fn a_hedged_retry_the_deadline_finds_queued_for_a_permit_gives_its_budget_token_back() {
    let retried = tokio::spawn(hedged_behind_a_permit_until_the_deadline(false));
    // The first attempt fails at once; while it waits out its second, a
    // call that never ends takes the only permit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let holder = tokio::spawn(hedged_behind_a_permit_until_the_deadline(true));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(DEADLINE_ONE.in_use(), 1);
    assert!(retried.await.unwrap().is_err(), "ended at the deadline");
    holder.abort();
    let _ = holder.await;
    // Two first attempts deposited two tokens; the retry the deadline
    // found queued took one and gave it back.
    assert_eq!(DEADLINE_QUEUE.available(), 2.0);
    let stats = counted("hedged_behind_a_permit_until_the_deadline");
    assert_eq!((stats.give_ups.deadline, stats.attempts), (1, 2));
}

// ---- a call dropped after each of its polls ----

thread_local! {
    /// The attempts the running call has started.
    static STARTS: Cell<u32> = const { Cell::new(0) };
}

/// Pending once, then ready: an await point that one more poll passes.
#[derive(Default)]
struct OnePoll(bool);

impl Future for OnePoll {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Where no time passes: a wait takes one poll, and a timer of an hour (an
/// attempt's timeout, a deadline) never fires.
async fn one_poll(delay: Duration) {
    if delay >= Duration::from_secs(3600) {
        std::future::pending::<()>().await;
    }
    OnePoll::default().await;
}

/// Counts its start, takes a poll, and fails its first two attempts.
async fn third_time_lucky() -> io::Result<u32> {
    let n = STARTS.with(|starts| {
        starts.set(starts.get() + 1);
        starts.get()
    });
    OnePoll::default().await;
    if n <= 2 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(n)
}

fn noted(_: &reattempt::hooks::Context<'_, io::Result<u32>>) {}

static LAZY_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static HOOKED_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static LIMITED_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static ONE_AT_A_TIME: ConcurrencyLimit = ConcurrencyLimit::new(1);
static BOUNDED_LIMITED_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static ONE_AT_A_TIME_BOUNDED: ConcurrencyLimit = ConcurrencyLimit::new(1);

/// Nothing of the user's in the loop, waiting in its own sleeper.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = LAZY_TOKENS)]
async fn lazy() -> io::Result<u32> {
    third_time_lucky().await
}

static TRACED_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// As `lazy`, run under a subscriber: the call has its spans.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = TRACED_TOKENS)]
async fn traced() -> io::Result<u32> {
    third_time_lucky().await
}

static TIMER_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static TRACED_TIMER_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// As `lazy`, waiting on tokio's timer: each attempt after the first waits
/// out its delay before it runs.
#[retry(max = 3, backoff = fixed(1ms), budget = TIMER_TOKENS)]
async fn on_the_timer() -> io::Result<u32> {
    third_time_lucky().await
}

/// As `on_the_timer`, run under a subscriber.
#[retry(max = 3, backoff = fixed(1ms), budget = TRACED_TIMER_TOKENS)]
async fn traced_on_the_timer() -> io::Result<u32> {
    third_time_lucky().await
}

/// A hook, waiting in the loop on its own sleeper.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = HOOKED_TOKENS, on_retry = noted)]
async fn hooked() -> io::Result<u32> {
    third_time_lucky().await
}

static HOOKED_TIMER_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// Hooks after the attempt and `fields(..)` on tokio's timer: each attempt
/// after the first waits out its delay before it runs, the hooks having
/// run before the wait.
#[retry(
    max = 3,
    backoff = fixed(1ms),
    budget = HOOKED_TIMER_TOKENS,
    on_retry = noted,
    after = noted,
    fields(tag)
)]
async fn hooked_on_the_timer(tag: u32) -> io::Result<u32> {
    let _ = tag;
    third_time_lucky().await
}

/// Each attempt holds a permit.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = LIMITED_TOKENS, limit = ONE_AT_A_TIME)]
async fn limited() -> io::Result<u32> {
    third_time_lucky().await
}

/// Each attempt holds a permit, which it waits for against the deadline.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = BOUNDED_LIMITED_TOKENS, limit = ONE_AT_A_TIME_BOUNDED, deadline = 3600s)]
async fn limited_and_bounded() -> io::Result<u32> {
    third_time_lucky().await
}

static BEFORE_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));
static HEDGED_BEFORE_TOKENS: RetryBudget = RetryBudget::new(1.0, 0, Duration::from_secs(600));

/// An async `before` hook that takes a poll before each retry.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, budget = BEFORE_TOKENS, before = |c| OnePoll(c.attempt() < 2))]
async fn slow_before() -> io::Result<u32> {
    third_time_lucky().await
}

/// As `slow_before`, hedged: its hedge (timed by `one_poll`, an hour
/// away) never starts.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, hedge = 3600s, budget = HEDGED_BEFORE_TOKENS, before = |c| OnePoll(c.attempt() < 2))]
async fn hedged_slow_before() -> io::Result<u32> {
    third_time_lucky().await
}

/// Each attempt races its timer.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, attempt_timeout = 3600s)]
async fn timed() -> io::Result<u32> {
    third_time_lucky().await
}

/// Each attempt races the deadline.
#[retry(max = 3, backoff = fixed(1ms), sleep = one_poll, deadline = 3600s)]
async fn bounded() -> io::Result<u32> {
    third_time_lucky().await
}

/// What the statistics of `function` count so far.
fn counted(function: &str) -> reattempt::stats::Stats {
    reattempt::stats::get(&format!("cancellation::{function}")).unwrap_or_default()
}

/// Makes a call of `function` and drops it after its first poll, then
/// another after its second, and so on until one ends, checking after each
/// that the call was counted once (as cancelled, unless it ended), that its
/// attempts were counted, that the budget lost only the tokens of the
/// retries that started, that no permit is held and that no attempt is
/// left current on the thread.
fn cut_after_every_poll<F: Future<Output = io::Result<u32>>>(
    function: &str,
    call: fn() -> F,
    budget: Option<&RetryBudget>,
    limit: Option<&ConcurrencyLimit>,
) {
    cut_after_every_poll_with(function, call, budget, limit, &|| {});
}

/// As [`cut_after_every_poll`], for a function that waits on tokio's
/// timer: polled in a runtime whose paused clock moves a millisecond (each
/// wait's length) after every poll that is pending.
fn cut_after_every_poll_on_tokio<F: Future<Output = io::Result<u32>>>(
    function: &str,
    call: fn() -> F,
    budget: Option<&RetryBudget>,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let _in_runtime = runtime.enter();
    cut_after_every_poll_with(function, call, budget, None, &|| {
        runtime.block_on(tokio::time::advance(Duration::from_millis(1)));
    });
}

/// The loop of both: `tick` runs after each poll that is pending.
fn cut_after_every_poll_with<F: Future<Output = io::Result<u32>>>(
    function: &str,
    call: fn() -> F,
    budget: Option<&RetryBudget>,
    limit: Option<&ConcurrencyLimit>,
    tick: &dyn Fn(),
) {
    // Tokens for every retry, so that the budget never refuses one.
    if let Some(budget) = budget {
        for _ in 0..100 {
            budget.deposit();
        }
    }
    let mut cx = Context::from_waker(Waker::noop());
    for cut in 0..=100 {
        STARTS.set(0);
        let before = counted(function);
        let tokens = budget.map(RetryBudget::available);
        let mut future = Box::pin(call());
        let mut ended = None;
        for _ in 0..cut {
            if let Poll::Ready(outcome) = future.as_mut().poll(&mut cx) {
                ended = Some(outcome);
                break;
            }
            assert!(reattempt::attempt().is_none(), "{function}: between polls");
            tick();
        }
        drop(future);
        assert!(reattempt::attempt().is_none(), "{function}: after the drop");
        let after = counted(function);
        let starts = STARTS.get();
        let began = u64::from(cut > 0);
        assert_eq!(after.calls - before.calls, began, "{function}, cut {cut}");
        assert_eq!(
            after.attempts - before.attempts,
            u64::from(starts),
            "{function}, cut {cut}"
        );
        let ends = u64::from(ended.is_some());
        assert_eq!(
            after.cancelled - before.cancelled,
            began - ends,
            "{function}, cut {cut}"
        );
        assert_eq!(
            after.successes_after_retries - before.successes_after_retries,
            ends,
            "{function}, cut {cut}"
        );
        if let (Some(budget), Some(tokens)) = (budget, tokens) {
            let retries = f64::from(starts.saturating_sub(1));
            assert_eq!(
                budget.available() - tokens,
                began as f64 - retries,
                "{function}, cut {cut}: a call deposits one token and spends one per retry that started"
            );
        }
        if let Some(limit) = limit {
            assert_eq!(limit.in_use(), 0, "{function}, cut {cut}");
        }
        if let Some(outcome) = ended {
            assert_eq!(outcome.unwrap(), 3, "{function}: the third attempt");
            assert!(
                cut >= 6,
                "{function}: three attempts and two waits take more than {cut} polls"
            );
            return;
        }
    }
    panic!("{function}: no call ended within 100 polls");
}

#[test]
fn a_lazy_call_dropped_after_any_poll_is_counted_once_and_keeps_nothing() {
    cut_after_every_poll("lazy", lazy, Some(&LAZY_TOKENS), None);
}

/// The subscriber is this thread's, but once one was set every call of
/// this file may make spans: the other tests hold on both paths.
#[test]
fn a_traced_call_dropped_after_any_poll_is_counted_once_and_keeps_nothing() {
    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        cut_after_every_poll("traced", traced, Some(&TRACED_TOKENS), None);
    });
}

#[test]
fn a_call_waiting_on_the_timer_dropped_after_any_poll_is_counted_once_and_keeps_nothing() {
    cut_after_every_poll_on_tokio("on_the_timer", on_the_timer, Some(&TIMER_TOKENS));
}

#[test]
fn a_traced_call_waiting_on_the_timer_dropped_after_any_poll_is_counted_once_and_keeps_nothing() {
    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        cut_after_every_poll_on_tokio(
            "traced_on_the_timer",
            traced_on_the_timer,
            Some(&TRACED_TIMER_TOKENS),
        );
    });
}

#[test]
fn a_call_with_hooks_waiting_on_the_timer_dropped_after_any_poll_is_counted_once_and_keeps_nothing()
{
    cut_after_every_poll_on_tokio(
        "hooked_on_the_timer",
        || hooked_on_the_timer(7),
        Some(&HOOKED_TIMER_TOKENS),
    );
}

#[test]
fn a_call_with_a_hook_dropped_after_any_poll_is_counted_once_and_keeps_nothing() {
    cut_after_every_poll("hooked", hooked, Some(&HOOKED_TOKENS), None);
}

#[test]
fn a_call_under_a_limit_dropped_after_any_poll_gives_its_permit_back() {
    cut_after_every_poll(
        "limited",
        limited,
        Some(&LIMITED_TOKENS),
        Some(&ONE_AT_A_TIME),
    );
}

#[test]
fn a_call_under_a_limit_and_a_deadline_dropped_after_any_poll_gives_its_permit_back() {
    cut_after_every_poll(
        "limited_and_bounded",
        limited_and_bounded,
        Some(&BOUNDED_LIMITED_TOKENS),
        Some(&ONE_AT_A_TIME_BOUNDED),
    );
}

#[test]
fn a_call_dropped_in_an_async_before_hook_gives_its_retrys_token_back() {
    cut_after_every_poll("slow_before", slow_before, Some(&BEFORE_TOKENS), None);
}

#[test]
fn a_hedged_call_dropped_in_an_async_before_hook_gives_its_retrys_token_back() {
    cut_after_every_poll(
        "hedged_slow_before",
        hedged_slow_before,
        Some(&HEDGED_BEFORE_TOKENS),
        None,
    );
}

#[test]
fn a_timed_call_dropped_after_any_poll_is_counted_once() {
    cut_after_every_poll("timed", timed, None, None);
}

#[test]
fn a_call_with_a_deadline_dropped_after_any_poll_is_counted_once() {
    cut_after_every_poll("bounded", bounded, None, None);
}

#[retry(max = 3, backoff = none)]
async fn succeeds_at_once_on_tokio() -> io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, backoff = none, sleep = tokio::time::sleep)]
async fn succeeds_at_once_with_its_own_sleeper() -> io::Result<u32> {
    Ok(1)
}

#[tokio::test]
async fn a_call_that_ends_on_its_first_attempt_is_not_counted_as_cancelled() {
    for _ in 0..10 {
        assert_eq!(succeeds_at_once_on_tokio().await.unwrap(), 1);
        assert_eq!(succeeds_at_once_with_its_own_sleeper().await.unwrap(), 1);
    }
    for function in [
        "succeeds_at_once_on_tokio",
        "succeeds_at_once_with_its_own_sleeper",
    ] {
        let stats = counted(function);
        assert_eq!((stats.calls, stats.cancelled), (10, 0), "{function}");
    }
}
// ---- a call dropped during an async `after` hook that follows a success ----

thread_local! {
    /// The `after` hooks that began to wait after a success.
    static WAITING_AFTER_SUCCESS: Cell<u32> = const { Cell::new(0) };
}

/// An `after` hook that waits a minute after a success, and not at all
/// after a failure. Its future borrows nothing of the context.
fn slow_after_success(
    ctx: &reattempt::hooks::Context<'_, io::Result<u32>>,
) -> impl Future<Output = ()> + use<> {
    let succeeded = ctx.value().is_some();
    async move {
        if succeeded {
            WAITING_AFTER_SUCCESS.set(WAITING_AFTER_SUCCESS.get() + 1);
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    }
}

/// A call state built first (`Call`), whose first attempt succeeds.
#[retry(max = 3, backoff = none, after = slow_after_success)]
async fn after_hook_on_a_first_try_success() -> io::Result<u32> {
    Ok(1)
}

/// As above, succeeding at its second attempt, a second after its first.
#[retry(max = 3, backoff = fixed(1s), after = slow_after_success)]
async fn after_hook_on_a_success_after_retries() -> io::Result<u32> {
    let n = STARTS.with(|starts| {
        starts.set(starts.get() + 1);
        starts.get()
    });
    if n == 1 {
        return Err(ErrorKind::ConnectionReset.into());
    }
    Ok(n)
}

/// A hedged round, whose first attempt succeeds.
#[retry(max = 3, backoff = none, hedge = 50ms, after = slow_after_success)]
async fn after_hook_on_a_hedged_success() -> io::Result<u32> {
    Ok(1)
}

/// Cuts a call of `function` ten seconds in, while its `after` hook waits
/// after its success, and checks that it is counted as cancelled and not as
/// a success; then lets one run to its end, counted as a success as ever
/// (`first_try`: at its first attempt).
async fn cut_in_the_after_hook<F: Future<Output = io::Result<u32>>>(
    function: &str,
    call: fn() -> F,
    first_try: bool,
) {
    let successes = |s: &reattempt::stats::Stats| s.first_try_successes + s.successes_after_retries;
    STARTS.set(0);
    WAITING_AFTER_SUCCESS.set(0);
    let before = counted(function);
    let cut = tokio::time::timeout(Duration::from_secs(10), call()).await;
    assert!(cut.is_err(), "{function}: cut while its hook waits");
    assert_eq!(
        WAITING_AFTER_SUCCESS.get(),
        1,
        "{function}: in the hook after a success"
    );
    let after = counted(function);
    assert_eq!(after.calls - before.calls, 1, "{function}: one call");
    assert_eq!(
        after.cancelled - before.cancelled,
        1,
        "{function}: cancelled"
    );
    assert_eq!(
        successes(&after),
        successes(&before),
        "{function}: no success"
    );

    STARTS.set(0);
    assert!(call().await.is_ok(), "{function}: let through");
    let ended = counted(function);
    assert_eq!(ended.calls - after.calls, 1, "{function}: one call");
    assert_eq!(
        ended.cancelled, after.cancelled,
        "{function}: not cancelled"
    );
    let (first, retried) = if first_try { (1, 0) } else { (0, 1) };
    assert_eq!(
        (
            ended.first_try_successes - after.first_try_successes,
            ended.successes_after_retries - after.successes_after_retries,
        ),
        (first, retried),
        "{function}: counted once, as a success"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_during_an_async_after_hook_that_follows_a_success_is_cancelled() {
    cut_in_the_after_hook(
        "after_hook_on_a_first_try_success",
        after_hook_on_a_first_try_success,
        true,
    )
    .await;
    cut_in_the_after_hook(
        "after_hook_on_a_success_after_retries",
        after_hook_on_a_success_after_retries,
        false,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_dropped_during_an_async_after_hook_that_follows_a_success_is_cancelled() {
    cut_in_the_after_hook(
        "after_hook_on_a_hedged_success",
        after_hook_on_a_hedged_success,
        true,
    )
    .await;
}
