use reattempt::retry;

// `exp` and the others take their parts by name, not by position.
#[retry(max = 3, backoff = exp(1s))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 3, backoff = linear(100ms, 1s))]
fn store() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
    let _ = store();
}
