// `transparent` on a variant of several fields, none marked as the source.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    #[classify(transparent)]
    Request { cause: std::io::Error, url: String },
}

fn main() {}
