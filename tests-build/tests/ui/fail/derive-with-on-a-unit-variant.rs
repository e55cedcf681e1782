// `with = ..` is called with the wrapped error; a unit variant has none.
use reattempt::{Classification, Classified};

fn classify(_: &()) -> Classification {
    Classification::transient()
}

#[derive(Debug, Classified)]
enum AppError {
    #[classify(with = classify)]
    Busy,
}

fn main() {}
