use reattempt::retry;

#[retry]
unsafe extern "C" fn sum(count: i32, mut args: ...) -> i32 {
    count
}

fn main() {}
