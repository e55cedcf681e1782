use reattempt::retry;

trait Store {
    #[retry]
    fn load(&self) -> std::io::Result<String>;
}

fn main() {}
