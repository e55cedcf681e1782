use reattempt::retry;

fn consume(text: String) -> std::io::Result<usize> {
    Ok(text.len())
}

// A raw name is named as it is written.
#[retry(max = 2)]
fn send(r#type: String) -> std::io::Result<usize> {
    consume(r#type)
}

fn main() {}
