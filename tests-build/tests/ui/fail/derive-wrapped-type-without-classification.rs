// A variant wraps a type with no classification: the error is at its type,
// and says what to write instead.
use reattempt::Classified;

#[derive(Debug)]
struct ParseError;

#[derive(Debug, Classified)]
enum AppError {
    Io(std::io::Error),
    Parse(ParseError),
}

fn main() {}
