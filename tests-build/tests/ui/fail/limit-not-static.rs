use reattempt::{ConcurrencyLimit, retry};

#[retry(max = 3, limit = ConcurrencyLimit::new(4))]
fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
