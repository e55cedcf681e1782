use reattempt::hooks::Context;
use reattempt::retry;
use std::io;

fn log_retry(ctx: &Context<'_, io::Result<u32>>) {
    let _ = (ctx.attempt(), ctx.delay(), ctx.error());
}

#[retry(
    preset = external_api,
    attempt_timeout = 500ms,
    retry_after = honor,
    max_retry_after = 30s,
    fields(user_id),
    before = |_| {},
    after = |ctx| {
        let class = ctx.class();
        async move {
            let _ = class;
        }
    },
    on_retry = log_retry,
    on_give_up = |ctx: &Context<'_, io::Result<u32>>| { let _ = ctx.gave_up(); },
)]
async fn fetch(user_id: u64) -> io::Result<u32> {
    let attempt = reattempt::attempt().map_or(0, |a| a.number());
    Ok(attempt + user_id as u32)
}

#[retry(preset = internal, retry_after = ignore, if_result = Vec::is_empty)]
fn drain(queue: &mut Vec<u32>) -> Vec<u32> {
    std::mem::take(queue)
}

fn main() {
    let _ = fetch(1);
    let _ = drain(&mut vec![1]);
}
