// A misspelled class: the error lists what a variant takes.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    #[classify(transeint)]
    Busy,
}

fn main() {}
