use reattempt::retry;

#[retry(max = 3, hedge = 50ms)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
