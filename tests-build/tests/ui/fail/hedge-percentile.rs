use reattempt::retry;

#[retry(max = 3, hedge(after = p100))]
async fn over() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 3, hedge = p30)]
async fn under() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 3, hedge(after = 50ms, min = 20ms))]
async fn min_without_a_percentile() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = (over(), under(), min_without_a_percentile());
}
