// A union cannot tell which of its fields is set.
use reattempt::Classified;

#[derive(Classified)]
union Raw {
    code: u32,
    bits: f32,
}

fn main() {}
