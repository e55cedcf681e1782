// A hook or a classifier of the wrong type is reported at it: a hook whose
// argument is not the call's context, an async hook on a sync function
// (its future would never run), a classifier of another error type.
use reattempt::hooks::Context;
use reattempt::retry;

async fn notify(_: &Context<'_, std::io::Result<u32>>) {}

fn is_busy(error: &String) -> bool {
    error.contains("busy")
}

#[retry(max = 3, before = |attempt: &u32| ())]
fn counted() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, after = |attempt: &u32| ())]
async fn counted_async() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, on_give_up = notify)]
fn notified() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, on = is_busy)]
fn classified() -> std::io::Result<u32> {
    Ok(1)
}

#[retry(max = 3, on = is_busy)]
async fn classified_async() -> std::io::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = (counted(), counted_async(), notified());
    let _ = (classified(), classified_async());
}
