// A method that takes `self` by value and whose body moves it, or a field
// of it, is reported at the move: each attempt would need a `self` of its
// own, and `clone(self)` is not a thing, so the message says to borrow.
use reattempt::retry;

struct Request {
    url: String,
}

fn send(url: String) -> std::io::Result<String> {
    Ok(url)
}

impl Request {
    #[retry(max = 3)]
    fn send(self) -> std::io::Result<String> {
        send(self.url)
    }

    #[retry(max = 3)]
    async fn into_url(mut self) -> std::io::Result<String> {
        self.url.push('/');
        Ok(self.url)
    }
}

fn main() {
    let _ = Request { url: String::new() }.send();
    let _ = Request { url: String::new() }.into_url();
}
