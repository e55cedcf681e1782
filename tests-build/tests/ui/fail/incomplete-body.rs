use reattempt::retry;

#[retry(max = 3)]
fn fetch() -> std::io::Result<String> {
    let text = String::from("partial")
    Ok(text)
}

fn main() {
    let _ = fetch();
}
