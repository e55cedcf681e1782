#![deny(unused_must_use)]

use reattempt::retry;

#[retry(max = 3)]
#[must_use = "the config may have failed to load"]
fn load() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    load();
}
