use reattempt::retry;

// The text form, written where an expression is evaluated on every call.
#[retry(policy = "max = 3")]
fn fixed() -> std::io::Result<()> {
    Ok(())
}

// Text that came from configuration.
fn configured(text: &str) -> std::io::Result<()> {
    #[retry(policy = text)]
    fn inner(text: &str) -> std::io::Result<()> {
        let _ = text;
        Ok(())
    }
    inner(text)
}

fn main() {
    let _ = fixed();
    let _ = configured("max = 3");
}
