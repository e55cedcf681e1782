use reattempt::retry;

#[retry(max = 3, hedge = 50ms)]
async fn fill(buffer: &mut Vec<u8>, mut count: usize) -> std::io::Result<usize> {
    buffer.push(1);
    count += 1;
    Ok(count)
}

fn main() {
    let mut buffer = Vec::new();
    let _ = fill(&mut buffer, 0);
}
