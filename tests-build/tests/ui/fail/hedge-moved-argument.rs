use reattempt::retry;

#[retry(max = 3, hedge = 50ms)]
async fn send(body: String) -> std::io::Result<usize> {
    let owned: String = body;
    Ok(owned.len())
}

fn main() {
    let _ = send(String::new());
}
