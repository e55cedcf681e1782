use reattempt::{hooks::Context, retry};

fn note(_: &Context<'_, std::io::Result<()>>) {}

#[retry(max = 3, hedge = 50ms, on_retry = note)]
async fn read() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = read();
}
