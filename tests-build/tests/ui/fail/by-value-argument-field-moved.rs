use reattempt::retry;

struct Request {
    url: String,
    attempts: u32,
    headers: Headers,
}

struct Headers {
    auth: String,
}

fn post(url: String, attempts: u32) -> std::io::Result<usize> {
    Ok(url.len() + attempts as usize)
}

// A field moved out of a by-value argument, which each attempt would move
// again. A `Copy` field (`attempts`) moves nothing.
#[retry(max = 3)]
fn send(request: Request) -> std::io::Result<usize> {
    post(request.url, request.attempts)
}

// A field of a field, in an async function.
#[retry(max = 3)]
async fn send_async(request: Request) -> std::io::Result<usize> {
    post(request.headers.auth, request.attempts)
}

fn main() {
    let request = || Request {
        url: String::new(),
        attempts: 0,
        headers: Headers {
            auth: String::new(),
        },
    };
    let _ = send(request());
    let _ = send_async(request());
}
