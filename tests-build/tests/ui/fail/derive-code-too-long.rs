// A code longer than a `reattempt::Code` holds is refused as the crate
// compiles, not cut in the logs.
use reattempt::Classified;

#[derive(Debug, Classified)]
enum AppError {
    #[classify(logical, code = "payment_method_declined_by_issuer")]
    Declined,
}

fn main() {}
