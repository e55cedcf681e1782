//! A retry policy read from a JSON file and reloaded when the file
//! changes, without a restart (feature `serde`):
//!
//! ```sh
//! cargo run --example reload --features serde
//! ```
//!
//! A watcher thread reads the file every 50 ms; a policy that reads and
//! passes its check replaces the cell's, and the next call uses it. One
//! that does not read, or is invalid, is reported, and the last good
//! policy stays. The example edits its own file three times and shows how
//! many attempts a failing call makes after each edit.

use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use reattempt::dynamic::{DynamicPolicy, PolicyCell};
use reattempt::retry;

static POLICY: PolicyCell = PolicyCell::new(DynamicPolicy::new());

#[retry(max = 5, backoff = none, policy = POLICY)]
fn always_fails(attempts: &AtomicU32) -> io::Result<()> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(ErrorKind::TimedOut.into())
}

/// Reads `path` every `every` until `stop` is set, and puts each new
/// content that reads as a valid policy in `cell`. Returns the problems
/// it reported, one per content that did not.
pub fn watch(
    path: PathBuf,
    cell: &'static PolicyCell,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> JoinHandle<Vec<String>> {
    thread::spawn(move || {
        let mut seen = None;
        let mut problems = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            // A file being replaced may be missing for a moment: the next
            // read finds it.
            if let Ok(text) = std::fs::read_to_string(&path)
                && seen.as_ref() != Some(&text)
            {
                let reloaded = serde_json::from_str::<DynamicPolicy>(&text)
                    .map_err(|problem| problem.to_string())
                    .and_then(|policy| {
                        cell.try_set(policy)
                            .map_err(|problem| problem.to_string())?;
                        Ok(policy)
                    });
                match reloaded {
                    Ok(policy) => eprintln!("policy reloaded: {policy}"),
                    Err(problem) => {
                        eprintln!("policy not reloaded, the last good one stays: {problem}");
                        problems.push(problem);
                    }
                }
                seen = Some(text);
            }
            thread::sleep(every);
        }
        problems
    })
}

/// Writes `text` to `path` whole: to a file beside it, then renamed over
/// it, so that the watcher never reads half of it.
fn write(path: &Path, text: &str) -> io::Result<()> {
    let next = path.with_extension("next");
    std::fs::write(&next, text)?;
    std::fs::rename(&next, path)
}

/// The attempts a failing call makes, once they are `expected` (the
/// watcher has reloaded), or after ten seconds.
fn attempts_until(expected: u32) -> u32 {
    let started = Instant::now();
    loop {
        let attempts = AtomicU32::new(0);
        always_fails(&attempts).unwrap_err();
        let attempts = attempts.into_inner();
        if attempts == expected || started.elapsed() > Duration::from_secs(10) {
            return attempts;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Three edits of a policy file in `dir`: `max` 2, then 4, then
/// text that is not a policy. Returns the attempts of a failing call after
/// each, and the problems the watcher reported.
pub fn demonstrate(dir: &Path) -> io::Result<(Vec<u32>, Vec<String>)> {
    let path = dir.join("retry-policy.json");
    write(&path, r#"{ "max": 2, "backoff": "none" }"#)?;
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = watch(
        path.clone(),
        &POLICY,
        Duration::from_millis(50),
        stop.clone(),
    );
    let mut seen = vec![attempts_until(2)];
    write(&path, r#"{ "max": 4, "backoff": "fixed(1ms)" }"#)?;
    seen.push(attempts_until(4));
    write(&path, r#"{ "max": 0 }"#)?;
    // Long enough for the watcher to have read it twice.
    thread::sleep(Duration::from_millis(200));
    seen.push(attempts_until(4));
    stop.store(true, Ordering::Relaxed);
    let problems = watcher.join().expect("the watcher does not panic");
    std::fs::remove_file(&path)?;
    Ok((seen, problems))
}

fn main() -> io::Result<()> {
    let dir = std::env::temp_dir().join(format!("reattempt-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (attempts, problems) = demonstrate(&dir)?;
    std::fs::remove_dir(&dir)?;
    println!("attempts after each edit: {attempts:?}");
    println!("refused: {problems:?}");
    Ok(())
}
