use reattempt::retry;

#[retry(fields(user))]
fn fetch(user_id: u64) -> std::io::Result<u64> {
    Ok(user_id)
}

// Not a list of names: the error is at what does not belong, and says
// what the list holds.
#[retry(fields("user_id"))]
fn quoted(user_id: u64) -> std::io::Result<u64> {
    Ok(user_id)
}

#[retry(fields(user_id = 1))]
fn assigned(user_id: u64) -> std::io::Result<u64> {
    Ok(user_id)
}

#[retry(clone(body.0))]
fn field(body: (String,)) -> std::io::Result<usize> {
    Ok(body.0.len())
}

fn main() {
    let _ = fetch(1);
    let _ = quoted(1);
    let _ = assigned(1);
    let _ = field((String::new(),));
}
