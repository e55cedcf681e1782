mod reexport {
    pub use ::reattempt as inner;
}

#[reexport::inner::retry(crate = reexport::inner, max = 2, backoff = none)]
fn by_path() -> std::io::Result<()> {
    Ok(())
}

#[reexport::inner::retry(crate = "reexport::inner", max = 2, backoff = none)]
async fn by_string() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = by_path();
    let _ = by_string();
}
