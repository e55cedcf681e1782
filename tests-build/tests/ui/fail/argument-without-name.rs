use reattempt::retry;

// A bare number, as other retry attributes take it.
#[retry(3)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

// A doubled comma.
#[retry(max = 3,, backoff = none)]
fn store() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
    let _ = store();
}
