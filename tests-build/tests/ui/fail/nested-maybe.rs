use reattempt::retry;

#[retry(nested = maybe)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
