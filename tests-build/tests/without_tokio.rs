//! `reattempt` built without its `tokio` feature, as a user who turns off
//! the default features builds it: tokio is not among its dependencies, the
//! facade's tests that need no tokio ([`TESTS`]) pass, and an async
//! function without `sleep = ..` (plain, or with a deadline, a timeout, a
//! hook or a limit) is one compile error at its attribute that says what
//! to add.
//!
//! Cargo unifies a crate's features across the workspace, where every
//! other member has tokio, so this builds a project of its own, in this
//! target's scratch directory, with the workspace's lockfile and offline
//! (everything it needs, the workspace needed first).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Ten minutes for each cargo command: a cold build takes seconds, so
/// only a hang reaches it.
const LIMIT: Duration = Duration::from_secs(600);

/// The facade's test files that need no tokio: async functions with
/// `sleep = ..` on another executor (timers, deadlines and a limit's
/// permits included), sync functions, hooks and dead letters with one call
/// id, dead letters from many processes on one file, and logs.
const TESTS: [&str; 5] = [
    "executors",
    "sync_fn",
    "correlation",
    "dead_letter_processes",
    "log_capture",
];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The project: the facade without default features, [`TESTS`] as its
/// tests, and the case above as an example.
fn project() -> PathBuf {
    let repository = repository();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("without-tokio");
    std::fs::create_dir_all(&dir).unwrap();
    let path = |relative: &str| {
        let path = repository.join(relative);
        assert!(path.is_file(), "{} is missing", path.display());
        toml_string(&path)
    };
    let manifest = format!(
        r#"[package]
name = "reattempt-without-tokio"
version = "0.0.0"
edition = "2024"
publish = false
autotests = false
autoexamples = false

[dependencies]
reattempt = {{ path = {root}, default-features = false }}

# Off: the test files ask for the facade's feature by this name.
[features]
tokio = []

# What the test files below use beside it, as the facade's manifest gives.
[dev-dependencies]
serde_json = "1"
tracing = "0.1.40"
tracing-subscriber = {{ version = "0.3", features = ["json", "fmt", "registry"] }}
{tests}
[[example]]
name = "needs-a-sleeper"
path = {needs_a_sleeper}

# A workspace of its own, not the repository's.
[workspace]
"#,
        root = toml_string(&repository),
        tests = TESTS
            .iter()
            .map(|name| format!(
                "\n[[test]]\nname = \"{name}\"\npath = {}\n",
                path(&format!("tests/{name}.rs"))
            ))
            .collect::<String>(),
        needs_a_sleeper = path("tests-build/tests/without-tokio/needs-a-sleeper.rs"),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's versions, so that the build is offline; cargo drops
    // what this project does not use.
    std::fs::copy(repository.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    dir
}

/// A TOML basic string: paths with backslashes or quotes stay one string.
fn toml_string(path: &Path) -> String {
    let text = path.to_str().expect("a UTF-8 path");
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Runs `cargo <args>` in the project, killed after [`LIMIT`].
fn cargo(project: &Path, args: &[&str]) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .args(args)
        .args(["--offline", "--color", "never"])
        .current_dir(project)
        .env("CARGO_TARGET_DIR", project.join("target"))
        // The facade and its test files compile without a warning here
        // too, as CI asks of them with tokio.
        .env("RUSTFLAGS", "-D warnings")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes while waiting, so that a full one cannot stall it.
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`cargo {}` ran longer than {LIMIT:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap().into_bytes(),
        stderr: stderr.join().unwrap().into_bytes(),
    }
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

/// One test, so that the three cargo commands share the project and its
/// target directory one after another.
#[test]
fn without_the_tokio_feature() {
    let project = project();

    let tree = cargo(&project, &["tree", "--edges", "normal", "--prefix", "none"]);
    let dependencies = text(&tree.stdout);
    assert!(tree.status.success(), "{}", text(&tree.stderr));
    assert!(dependencies.contains("reattempt-core "), "{dependencies}");
    assert!(
        !dependencies.lines().any(|line| line.starts_with("tokio ")),
        "tokio is a dependency without the feature:\n{dependencies}"
    );

    let tests = cargo(&project, &["test", "--tests"]);
    assert!(
        tests.status.success(),
        "the tests failed without tokio:\n{}\n{}",
        text(&tests.stdout),
        text(&tests.stderr)
    );
    let passed: Vec<&str> = text(&tests.stdout)
        .lines()
        .filter(|line| line.starts_with("test result: ok."))
        .collect();
    assert_eq!(passed.len(), TESTS.len(), "{}", text(&tests.stdout));

    let check = cargo(
        &project,
        &[
            "check",
            "--example",
            "needs-a-sleeper",
            "--message-format",
            "short",
        ],
    );
    assert!(!check.status.success(), "it compiled without a sleeper");
    let case = "tests/without-tokio/needs-a-sleeper.rs";
    let errors: Vec<String> = text(&check.stderr)
        .lines()
        .filter(|line| line.contains(": error"))
        .map(|line| line[line.find(case).unwrap_or(0)..].to_owned())
        .collect();
    let message = "error[E0277]: an async function needs a sleeper: \
                   `sleep = ..`, or `reattempt`'s `tokio` feature: \
                   no sleeper for this async function's waits";
    let expected: Vec<String> = [8, 13, 18, 24, 31, 36]
        .iter()
        .map(|line| format!("{case}:{line}:1: {message}"))
        .collect();
    assert_eq!(errors, expected, "{}", text(&check.stderr));
}
