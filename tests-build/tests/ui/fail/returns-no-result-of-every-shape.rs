// A return type that is not a `Result` is reported at its first token,
// whatever its shape.
use reattempt::retry;

trait Lookup {
    type Output;
}

struct Table;

impl Lookup for Table {
    type Output = u32;
}

#[retry(max = 3)]
fn a_tuple() -> (u8, String) {
    (1, String::new())
}

#[retry(max = 3)]
fn a_reference() -> &'static str {
    "job"
}

#[retry(max = 3)]
fn an_array() -> [u8; 4] {
    [0; 4]
}

#[retry(max = 3)]
fn a_path_from_the_root() -> ::core::option::Option<u8> {
    None
}

#[retry(max = 3)]
fn a_qualified_path() -> <Table as Lookup>::Output {
    7
}

#[retry(max = 3)]
fn in_parentheses() -> (Option<u8>) {
    None
}

#[retry(max = 3)]
fn a_future() -> impl std::future::Future<Output = Option<u8>> {
    async move { None }
}

fn main() {
    let _ = (a_tuple(), a_reference(), an_array());
    let _ = (a_path_from_the_root(), a_qualified_path(), in_parentheses());
    let _ = a_future();
}
