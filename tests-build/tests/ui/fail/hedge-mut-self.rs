use reattempt::retry;

struct Client {
    sent: u32,
}

impl Client {
    #[retry(max = 3, hedge = 50ms)]
    async fn send(&mut self) -> std::io::Result<u32> {
        self.sent += 1;
        Ok(self.sent)
    }
}

fn main() {
    let mut client = Client { sent: 0 };
    let _ = client.send();
}
