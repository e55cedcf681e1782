use reattempt::retry;

#[retry(max = 3, hedge(after = p95))]
async fn read() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = read();
}
