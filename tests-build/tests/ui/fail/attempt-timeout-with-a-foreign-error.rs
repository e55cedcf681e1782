use reattempt::retry;

// The error type of another crate, as `reqwest::Error` or `sqlx::Error`
// would be: no `From<AttemptTimeout>` can be written for it here.
#[retry(on = |_| true, attempt_timeout = 2s)]
async fn parse() -> Result<u32, std::num::ParseIntError> {
    "7".parse()
}

fn main() {
    let _ = parse();
}
