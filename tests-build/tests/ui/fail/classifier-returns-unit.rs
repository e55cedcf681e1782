use reattempt::retry;

#[retry(on = |e: &std::io::Error| { let _ = e; }, max = 3)]
fn read() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = read();
}
