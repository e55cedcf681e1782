use reattempt::retry;

#[retry(max = 9, hedge(after = 20ms, in_flight = 5))]
async fn many() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 9, hedge(after = 20ms, in_flight = 1))]
async fn one() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 9, hedge(in_flight = 2))]
async fn no_after() -> std::io::Result<()> {
    Ok(())
}

#[retry(max = 9, hedge(after = 20ms, within = 2))]
async fn unknown() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = (many(), one(), no_after(), unknown());
}
