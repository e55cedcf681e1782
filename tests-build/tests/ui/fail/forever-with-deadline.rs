use reattempt::retry;

// `forever` is no limit at all; with a deadline the call is `unbounded`.
#[retry(max = forever, deadline = 30s)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
