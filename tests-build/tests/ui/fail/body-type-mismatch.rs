use reattempt::retry;

#[retry(max = 3)]
fn fetch() -> std::io::Result<String> {
    Ok(42)
}

fn main() {
    let _ = fetch();
}
