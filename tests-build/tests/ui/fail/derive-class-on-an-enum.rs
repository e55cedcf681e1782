// A class on the enum itself would be a silent default for its variants.
use reattempt::Classified;

#[derive(Debug, Classified)]
#[classify(transient)]
enum AppError {
    Io(std::io::Error),
}

fn main() {}
