use reattempt::hooks::Context;
use reattempt::retry;

// An async function's hook returns `()` or a future to await: any other
// return is reported at the hook.
#[retry(max = 3, on_retry = |_ctx: &Context<'_, std::io::Result<()>>| 5)]
async fn fetch() -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let _ = fetch();
}
