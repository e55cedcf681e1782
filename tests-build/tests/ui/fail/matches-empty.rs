use reattempt::retry;

#[retry(on = matches())]
fn f() -> std::io::Result<()> {
    Ok(())
}

fn main() {}
