use reattempt::retry;

#[retry]
const fn answer() -> Result<u32, ()> {
    Ok(42)
}

fn main() {
    let _ = answer();
}
