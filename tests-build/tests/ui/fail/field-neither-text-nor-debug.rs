use reattempt::retry;

// `fields(..)` writes an argument as text when it is `AsRef<str>`, else by
// `Debug`: one that is neither is reported at its name.
struct Token;

#[retry(max = 3, fields(token))]
fn fetch(token: Token) -> std::io::Result<()> {
    let _ = token;
    Ok(())
}

fn main() {
    let _ = fetch(Token);
}
