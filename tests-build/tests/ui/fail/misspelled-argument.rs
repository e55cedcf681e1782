use reattempt::retry;

#[retry(max = 3, bakcoff = exp)]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
