//! BENCHMARKS.md's figures and claims about what a call of `#[retry]`
//! executes, counted again under callgrind: a change that moves a figure,
//! or that reads the clock or calls into `tracing` where the document says
//! a call does not, fails here and not only in the table.
//!
//! The `calls` benchmark is built as `scripts/bench-counts.sh` builds it
//! (optimised, in the workspace's target directory, which `cargo bench`
//! shares) and run under `valgrind --tool=callgrind`, each variant N calls
//! and none; each figure is the difference over N. Instruction counts are
//! exact for one binary on one machine, but another machine's CPU and
//! kernel can change what libc runs (`clock_gettime` through the vDSO or
//! a system call), so a published figure holds within 2 % (1 instruction
//! for the smallest rows). Clock reads and calls into `tracing` are
//! counted exactly.
//!
//! Without valgrind the test is skipped, and says so; under `CI` it fails.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Calls per run, as BENCHMARKS.md's figures were counted.
const CALLS: u64 = 5_000;
/// Calls per run for the peers' async retries, which wait a real
/// millisecond or so on tokio's timer even for a zero delay.
const PEER_ASYNC_RETRIES: u64 = 500;
/// How long a build may take (a first build compiles every peer), and a
/// run under valgrind.
const BUILD_LIMIT: Duration = Duration::from_secs(30 * 60);
const RUN_LIMIT: Duration = Duration::from_secs(5 * 60);

#[test]
fn the_published_counts_of_a_call_are_what_callgrind_counts() {
    if !valgrind_installed() {
        return;
    }
    let document = Document::read();
    let plain = Calls::plain();

    // The instruction table's direct and `#[retry]` columns.
    for (row, group) in ROWS {
        for variant in ["direct", "reattempt"] {
            let Some(published) = document.instructions(row, variant) else {
                continue;
            };
            let counted = plain.per_call(group, variant, CALLS, false).instructions;
            assert_close(counted, published, &format!("{row}, {variant}"));
        }
    }

    // The success rows with a subscriber that listens, and with the
    // `metrics` feature.
    let traced = document.conditions("a subscriber that listens");
    let metered = document.conditions("the `metrics` feature");
    let metrics = Calls::build(&["--features", "reattempt/metrics"]);
    for (column, group) in [(0, "sync"), (1, "async")] {
        let counted = plain.per_call(group, "reattempt", CALLS, true);
        assert_close(
            counted.instructions,
            traced[column],
            &format!("{group}, traced"),
        );
        // What makes the tracing checks below able to fail.
        assert!(
            counted.tracing_calls > 0.0,
            "{group}: a traced call was counted with no call into tracing"
        );
        let counted = metrics.per_call(group, "reattempt", CALLS, false);
        assert_close(
            counted.instructions,
            metered[column],
            &format!("{group}, metrics"),
        );
        // "a first-try success reads the clock at its start and its end"
        assert_eq!(
            counted.clock_reads, 2.0,
            "{group}, metrics: clock reads per call"
        );
    }
}

#[test]
fn a_call_without_subscriber_or_metrics_calls_no_tracing_and_reads_the_clock_only_to_retry() {
    if !valgrind_installed() {
        return;
    }
    let plain = Calls::plain();
    // "reads no clock without the `metrics` feature" on a first-try
    // success; "a call reads the clock twice" with one retry, for the
    // statistics' duration; "no call into `tracing`" without a subscriber.
    for (group, clock_reads) in [
        ("sync", 0.0),
        ("async", 0.0),
        ("sync-once", 2.0),
        ("async-once", 2.0),
    ] {
        let counted = plain.per_call(group, "reattempt", CALLS, false);
        assert_eq!(
            counted.clock_reads, clock_reads,
            "{group}: clock reads per call"
        );
        assert_eq!(
            counted.tracing_calls, 0.0,
            "{group}: calls into tracing per call"
        );
    }
}

#[test]
fn the_comparisons_with_the_peers_hold() {
    if !valgrind_installed() {
        return;
    }
    let plain = Calls::plain();
    let mut counted = HashMap::new();
    let mut count = |group: &'static str, variant: &'static str| {
        *counted.entry((group, variant)).or_insert_with(|| {
            let calls = if group == "async-once" && variant != "reattempt" {
                PEER_ASYNC_RETRIES
            } else {
                CALLS
            };
            plain.per_call(group, variant, calls, false).instructions
        })
    };

    // "under half of backon's"
    let (ours, backon) = (count("sync", "reattempt"), count("sync", "backon"));
    assert!(
        ours * 2.0 < backon,
        "sync success: ours {ours}, backon {backon}"
    );

    // "second of the five crates after tokio-retry2"
    let ours = count("async", "reattempt");
    let cheaper: Vec<_> = ["backon", "tokio-retry2", "backoff", "tryhard"]
        .into_iter()
        .filter(|peer| count("async", peer) < ours)
        .collect();
    assert_eq!(
        cheaper,
        ["tokio-retry2"],
        "async success: the peers cheaper than ours ({ours})"
    );

    // "each peer spends over four times as much"
    let ours = count("async-once", "reattempt");
    for peer in ["backon", "tokio-retry2", "backoff", "tryhard"] {
        let theirs = count("async-once", peer);
        assert!(
            theirs > 4.0 * ours,
            "async retry: ours {ours}, {peer} {theirs}"
        );
    }

    // The goals' verdicts: sync success at most +15 and async success at
    // most +40 over the direct call are missed, as is a sync retry at most
    // backon's.
    let sync_over = count("sync", "reattempt") - count("sync", "direct");
    assert!(
        sync_over > 15.0,
        "sync success +{sync_over}: the goal is met"
    );
    let async_over = count("async", "reattempt") - count("async", "direct");
    assert!(
        async_over > 40.0,
        "async success +{async_over}: the goal is met"
    );
    let (ours, backon) = (
        count("sync-once", "reattempt"),
        count("sync-once", "backon"),
    );
    assert!(
        ours > backon,
        "sync retry: ours {ours}, backon {backon}: the goal is met"
    );
}

/// The instruction table's rows, and the benchmark's group for each.
const ROWS: [(&str, &str); 4] = [
    ("sync success", "sync"),
    ("async success", "async"),
    ("sync, one retry", "sync-once"),
    ("async, one retry", "async-once"),
];

/// A published figure, within what another machine may move it by.
fn assert_close(counted: f64, published: f64, what: &str) {
    let allowed = (published * 0.02).max(1.0);
    assert!(
        (counted - published).abs() <= allowed,
        "{what}: callgrind counts {counted:.1} instructions per call, BENCHMARKS.md gives {published}"
    );
}

fn valgrind_installed() -> bool {
    let found = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    assert!(
        found || !ci,
        "valgrind is not installed, and CI needs these counts"
    );
    if !found {
        eprintln!("SKIPPED: valgrind is not installed, so no call is counted");
    }
    found
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the benches member is in the workspace")
}

/// A file of this test's own: the tests run at once, and may count the
/// same variant.
fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("counts");
    fs::create_dir_all(&dir).expect("a scratch directory");
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{}-{n}-{name}", std::process::id()))
}

/// Runs `command` to its end, or fails the test at `limit`.
fn run_within(mut command: Command, limit: Duration) -> ExitStatus {
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} ran over {limit:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// BENCHMARKS.md's "Instructions per call" section.
struct Document {
    section: String,
}

impl Document {
    fn read() -> Self {
        let text = fs::read_to_string(workspace().join("BENCHMARKS.md")).expect("BENCHMARKS.md");
        let start = text
            .find("## Instructions per call")
            .expect("BENCHMARKS.md has its instructions section");
        let rest = &text[start..];
        let end = rest[2..].find("\n## ").map_or(rest.len(), |end| end + 2);
        Document {
            section: rest[..end].to_owned(),
        }
    }

    /// The cells of the table row that starts with `label`.
    fn row(&self, label: &str) -> Vec<&str> {
        let line = self
            .section
            .lines()
            .find(|line| line.starts_with(&format!("| {label}")))
            .unwrap_or_else(|| panic!("BENCHMARKS.md has no row {label:?}"));
        line.trim_matches('|').split('|').map(str::trim).collect()
    }

    /// The instruction table's figure for `variant` (its column) in `row`,
    /// if it gives one.
    fn instructions(&self, row: &str, variant: &str) -> Option<f64> {
        let header = self.row("| direct");
        let label = if variant == "reattempt" {
            "`#[retry]`"
        } else {
            variant
        };
        let column = header
            .iter()
            .position(|name| *name == label)
            .unwrap_or_else(|| panic!("the instruction table has no column for {variant}"));
        figure(self.row(row)[column])
    }

    /// The sync and async success figures of the conditions table's row
    /// that starts with `label`.
    fn conditions(&self, label: &str) -> [f64; 2] {
        let row = self.row(label);
        [1, 2].map(|column| figure(row[column]).unwrap_or_else(|| panic!("{label}: no figure")))
    }
}

/// A cell's first number ("48 (+29)", "3,984"), or `None` for "—".
fn figure(cell: &str) -> Option<f64> {
    let number: String = cell
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    (!number.is_empty()).then(|| number.parse().expect("a number"))
}

/// What callgrind counted of a run, or per call.
#[derive(Debug, Clone, Copy)]
struct Counts {
    instructions: f64,
    clock_reads: f64,
    tracing_calls: f64,
}

/// The `calls` benchmark, built.
struct Calls {
    binary: PathBuf,
}

impl Calls {
    /// The benchmark as the tables count it, built once for every test.
    fn plain() -> &'static Self {
        static PLAIN: OnceLock<Calls> = OnceLock::new();
        PLAIN.get_or_init(|| Calls::build(&[]))
    }

    fn build(features: &[&str]) -> Self {
        let json = scratch("build.json");
        let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo
            .current_dir(workspace())
            .args([
                "bench", "-q", "-p", "benches", "--bench", "calls", "--no-run",
            ])
            .args(features)
            .arg("--message-format=json-render-diagnostics")
            .stdout(File::create(&json).expect("the build's output file"));
        assert!(
            run_within(cargo, BUILD_LIMIT).success(),
            "the calls benchmark did not build"
        );
        let messages = fs::read_to_string(&json).expect("the build's output");
        let _ = fs::remove_file(&json);
        let binary = messages
            .lines()
            .filter_map(|line| line.split("\"executable\":\"").nth(1))
            .filter_map(|rest| rest.split('"').next())
            .rfind(|path| path.contains("calls-"))
            .expect("cargo names the calls benchmark's executable");
        Calls {
            binary: PathBuf::from(binary),
        }
    }

    /// What one call of `variant` costs: `calls` calls counted less none.
    fn per_call(&self, group: &str, variant: &str, calls: u64, subscriber: bool) -> Counts {
        let none = self.run(group, variant, 0, subscriber);
        let some = self.run(group, variant, calls, subscriber);
        let per_call = |some: u64, none: u64| (some as f64 - none as f64) / calls as f64;
        Counts {
            instructions: per_call(some.instructions, none.instructions),
            clock_reads: per_call(some.clock_reads, none.clock_reads),
            tracing_calls: per_call(some.tracing_calls, none.tracing_calls),
        }
    }

    fn run(&self, group: &str, variant: &str, calls: u64, subscriber: bool) -> RunCounts {
        let out = scratch(&format!("{group}-{variant}-{calls}.callgrind"));
        let mut valgrind = Command::new("valgrind");
        valgrind
            .arg("--tool=callgrind")
            // Every name written whole, so that each call's line names its callee.
            .args(["--compress-strings=no", "--compress-pos=no"])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&self.binary)
            .args(["run", group, variant, &calls.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if subscriber {
            valgrind.env("CALLS_SUBSCRIBER", "1");
        }
        let status = run_within(valgrind, RUN_LIMIT);
        assert!(
            status.success(),
            "callgrind of {group} {variant} failed: {status}"
        );
        let profile = fs::read_to_string(&out).expect("callgrind's profile");
        let _ = fs::remove_file(&out);
        RunCounts::of(&profile)
    }
}

/// A run's totals.
#[derive(Debug, Default)]
struct RunCounts {
    instructions: u64,
    clock_reads: u64,
    tracing_calls: u64,
}

impl RunCounts {
    /// Reads a profile written with `--compress-strings=no`: each `calls=`
    /// line follows the `cfn=` line that names its callee.
    fn of(profile: &str) -> Self {
        let mut counts = RunCounts::default();
        let mut calls_of: HashMap<&str, u64> = HashMap::new();
        let mut callee = "";
        for line in profile.lines() {
            if let Some(name) = line.strip_prefix("cfn=") {
                callee = name;
            } else if let Some(calls) = line.strip_prefix("calls=") {
                let calls: u64 = calls
                    .split(' ')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a count of calls");
                *calls_of.entry(callee).or_default() += calls;
            } else if let Some(total) = line.strip_prefix("summary:") {
                counts.instructions = total.trim().parse().expect("a total");
            }
        }
        for (name, calls) in calls_of {
            if name.starts_with("clock_gettime") {
                counts.clock_reads += calls;
            }
            if name.contains("tracing") {
                counts.tracing_calls += calls;
            }
        }
        counts
    }
}
