// A variant is classified one way.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    #[classify(transient, transparent)]
    Io(std::io::Error),
}

fn main() {}
