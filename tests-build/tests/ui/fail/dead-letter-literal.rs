use reattempt::retry;

#[retry(dead_letter = "failures.jsonl")]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
