use reattempt::retry;

#[retry(fields(user))]
fn fetch(user_id: u64) -> std::io::Result<u64> {
    Ok(user_id)
}

fn main() {
    let _ = fetch(1);
}
