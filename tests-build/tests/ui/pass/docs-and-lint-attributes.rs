//! `#[retry]` keeps doc comments and lint attributes, before and after it.
#![deny(missing_docs, dead_code)]

use reattempt::retry;

/// Loads the configuration.
#[retry(max = 3, backoff = fixed(10ms))]
#[inline]
#[deprecated = "use load_v2"]
pub fn load() -> std::io::Result<String> {
    Ok(String::new())
}

#[allow(dead_code)]
#[retry(max = 2)]
fn never_called() -> std::io::Result<()> {
    Ok(())
}

#[allow(deprecated)]
fn main() {
    let _ = load();
}
