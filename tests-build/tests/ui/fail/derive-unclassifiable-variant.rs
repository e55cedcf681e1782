// A variant that wraps no error and names no class: the derive never picks
// a class for it silently.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    Io(std::io::Error),
    Parse,
}

fn main() {}
