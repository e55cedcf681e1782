use reattempt::{RetryBudget, retry};
use std::time::Duration;

struct Client {
    budget: RetryBudget,
}

impl Client {
    #[retry(max = 3, budget = self.budget)]
    fn fetch(&self) -> std::io::Result<()> {
        Ok(())
    }
}

fn main() {
    let client = Client { budget: RetryBudget::new(0.2, 1, Duration::from_secs(10)) };
    let _ = client.fetch();
}
