use reattempt::retry;

// The logs write an error with `Display`, else `Debug`: a type with
// neither is reported at the return type.
struct Opaque;

#[retry(max = 3, on = |_e: &Opaque| true)]
fn fetch() -> Result<String, Opaque> {
    Err(Opaque)
}

#[retry(max = 3, on = |_e: &Opaque| true)]
async fn fetch_async() -> Result<String, Opaque> {
    Err(Opaque)
}

fn main() {
    let _ = fetch();
    let _ = fetch_async();
}
