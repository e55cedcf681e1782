use reattempt::retry;

#[retry(max = -1)]
fn f() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
