//! What the tests against real servers share.

#![allow(dead_code)]

pub mod own_redis;

/// The server address in `var`, or `None` when the test is to be skipped.
/// `.ci/run` starts the servers and sets these variables.
///
/// Under `CI` a missing server fails the test, so that a green run means
/// the server tests ran. Elsewhere the skip is written to the terminal
/// directly, past the test harness's capture, so that it shows in the run.
pub fn server_url(var: &str) -> Option<String> {
    let value = std::env::var(var).ok();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    match server_address(var, value, ci) {
        Ok(Some(url)) => Some(url),
        Ok(None) => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "skipped: {var} is not set; `.ci/run` starts the local server and sets it (see DEVELOPERS.md)"
            );
            None
        }
        Err(message) => panic!("{message}"),
    }
}

/// What [`server_url`] decides from the variable's value and whether this
/// is CI: the address, a skip, or a failure with its message.
pub fn server_address(
    var: &str,
    value: Option<String>,
    ci: bool,
) -> Result<Option<String>, String> {
    match value {
        Some(url) if !url.is_empty() => Ok(Some(url)),
        _ if ci => Err(format!(
            "{var} is not set under CI: `.ci/run` must start the server and set it, or this test would pass without running"
        )),
        _ => Ok(None),
    }
}

/// A pool of a few connections to the SQL server whose address is in
/// `var`, or `None` after saying why the test is skipped.
pub async fn sqlx_pool<DB: sqlx::Database>(var: &str) -> Option<sqlx::Pool<DB>> {
    let url = server_url(var)?;
    let pool = sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(6)
        .acquire_timeout(std::time::Duration::from_secs(10))
        .connect(&url)
        .await
        .unwrap_or_else(|e| panic!("{var} is set but the server does not answer: {e}"));
    Some(pool)
}

/// The error codes an `after` hook saw, attempt by attempt.
pub type Codes = std::sync::Mutex<Vec<Option<String>>>;

/// An `after` hook that records the code of each attempt's class.
pub fn seen(codes: &Codes, ctx: &reattempt::hooks::Context<'_, Result<(), sqlx::Error>>) {
    let code = ctx.class().and_then(|c| c.code().map(str::to_owned));
    codes.lock().unwrap().push(code);
}

/// A suffix for names of tables and keys that no other test run uses.
pub fn unique() -> String {
    format!("{}_{:08x}", std::process::id(), rand_u32())
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now()) as u32
}

/// Serves `app` on a port of 127.0.0.1 of its own, on the test's runtime,
/// and gives its address.
pub async fn serve(app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// A TCP port on 127.0.0.1 on which nothing listens.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// Starts this test binary again as a child process running `test` alone,
/// with `envs` set; its stdout is piped for [`child_count`].
pub fn spawn_child(test: &str, envs: &[(&str, &str)]) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", test, "--test-threads", "1", "--nocapture"])
        .envs(envs.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the child")
}

/// Waits for a child of [`spawn_child`] to pass and reads the number it
/// printed after `key=`.
pub fn child_count<T: std::str::FromStr>(child: std::process::Child, key: &str) -> T {
    let output = child.wait_with_output().expect("the child's output");
    assert!(output.status.success(), "a child failed");
    let text = String::from_utf8_lossy(&output.stdout);
    // The harness may print the test's name on the same line.
    text.split(&format!("{key}="))
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no {key} count in {text}"))
}

/// Keeps a second dispatcher registered for the rest of the process, one
/// that wants nothing, so that a test capturing its logs on its own thread
/// sees its events: with a single registered dispatcher, `tracing` works
/// out a callsite's interest from the default of whichever thread reaches
/// it first, and a test beside it without a subscriber would turn the
/// callsite off for every thread.
pub fn one_interest_per_thread() {
    static ANCHOR: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    ANCHOR.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
}
