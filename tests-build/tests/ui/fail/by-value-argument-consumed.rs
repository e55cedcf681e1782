use reattempt::retry;

fn upload(body: Vec<u8>) -> std::io::Result<usize> {
    Ok(body.len())
}

#[retry(max = 3)]
fn send(body: Vec<u8>) -> std::io::Result<usize> {
    upload(body)
}

fn main() {
    let _ = send(Vec::new());
}
