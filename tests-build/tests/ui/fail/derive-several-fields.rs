// Several fields and no attribute: the derive does not guess which holds
// the wrapped error.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    Request { cause: std::io::Error, url: String },
}

fn main() {}
