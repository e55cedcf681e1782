//! The JSON Lines dead-letter file shared by many short-lived processes:
//! each one opens it (repairing a torn last line if there is one) while
//! others append, and the file must end with every record on a line of its
//! own, none blank or torn.
//!
//! The test runs this same binary as child processes, each of which writes
//! its records through `#[retry(dead_letter = ...)]`.

use std::io;
use std::process::{Child, Command};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use reattempt::dead_letter::JsonLines;
use reattempt::retry;

const CHILD: &str = "REATTEMPT_DEAD_LETTER_CHILD";
/// The file the children share, named by their parent.
const FILE_OF_PARENT: &str = "REATTEMPT_DEAD_LETTER_FILE";
const PROCESSES: usize = 160;
const AT_ONCE: usize = 16;
const RECORDS: usize = 20;

/// The parent's file, named by its process id: two runs of the suite at once
/// must not write one file and count each other's records.
static SHARED: LazyLock<JsonLines> = LazyLock::new(|| {
    let path = std::env::var(FILE_OF_PARENT).unwrap_or_else(|_| {
        format!(
            "{}/dead-letters-from-processes-{}.jsonl",
            env!("CARGO_TARGET_TMPDIR"),
            std::process::id()
        )
    });
    JsonLines::new(Box::leak(path.into_boxed_str()))
});

#[retry(max = 1, dead_letter = SHARED)]
fn fails_for_good(size: usize) -> io::Result<()> {
    Err(io::Error::other("x".repeat(size)))
}

/// What each child process does; a no-op when run as a plain test.
#[test]
fn child_writes_records() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for _ in 0..RECORDS {
        fails_for_good(6_000).unwrap_err();
    }
}

fn spawn_child() -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writes_records", "--test-threads", "1"])
        .env(CHILD, "1")
        .env(FILE_OF_PARENT, SHARED.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn a child process")
}

#[test]
fn many_processes_appending_leave_no_blank_or_torn_line() {
    let _ = std::fs::remove_file(SHARED.path());
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut started = 0;
    let mut running: Vec<Child> = Vec::new();
    while started < PROCESSES || !running.is_empty() {
        while started < PROCESSES && running.len() < AT_ONCE {
            running.push(spawn_child());
            started += 1;
        }
        running.retain_mut(|child| match child.try_wait().unwrap() {
            Some(status) => {
                assert!(status.success(), "a child failed: {status}");
                false
            }
            None => true,
        });
        assert!(
            Instant::now() < deadline,
            "the children did not finish in time"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let text = std::fs::read_to_string(SHARED.path()).unwrap();
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let blank = lines.iter().filter(|l| l.is_empty()).count();
    let torn = lines
        .iter()
        .filter(|l| !l.is_empty() && serde_json::from_str::<serde_json::Value>(l).is_err())
        .count();
    assert_eq!((blank, torn), (0, 0), "blank and torn lines");
    assert_eq!(lines.len(), PROCESSES * RECORDS, "every record, once");
    assert!(text.ends_with('\n'));
    std::fs::remove_file(SHARED.path()).unwrap();
}
