// Two fields marked as the wrapped error: a variant delegates to one.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    #[classify(transparent)]
    Copy {
        #[classify(source)]
        from: std::io::Error,
        #[classify(source)]
        to: std::io::Error,
    },
}

fn main() {}
