use reattempt::retry;

#[retry(max = 3)]
fn ping() {}

fn main() {
    ping();
}
