use reattempt::retry;

#[retry(clone(request))]
fn send(body: Vec<u8>) -> std::io::Result<usize> {
    Ok(body.len())
}

fn main() {
    let _ = send(Vec::new());
}
