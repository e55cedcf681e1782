//! By-value arguments the body may use: a `Copy` one moved into a call,
//! one only borrowed, one cloned per attempt, one bound again in the body,
//! one moved inside a closure or a macro, which rustc judges, the fields
//! of one (a `Copy` field moved or bound by a pattern, one bound by
//! reference, any field of a clone), and a `&mut` behind
//! an alias or in a field, which a call reborrows instead of moving.

use reattempt::retry;

fn consume(bytes: Vec<u8>) -> std::io::Result<usize> {
    Ok(bytes.len())
}

fn by_number(n: u64) -> std::io::Result<u64> {
    Ok(n)
}

#[derive(Clone, Copy)]
struct Point {
    x: i32,
}

fn by_point(p: Point) -> std::io::Result<i32> {
    Ok(p.x)
}

#[retry(max = 3)]
fn copied(n: u64, p: Point) -> std::io::Result<u64> {
    let _ = by_point(p)?;
    by_number(n)
}

#[retry(max = 3)]
fn borrowed(body: Vec<u8>) -> std::io::Result<usize> {
    Ok(body.len())
}

#[retry(max = 3, clone(body))]
fn cloned(body: Vec<u8>) -> std::io::Result<usize> {
    consume(body)
}

#[retry(max = 3)]
fn bound_again(body: Vec<u8>) -> std::io::Result<usize> {
    let body = body.clone();
    consume(body)
}

#[retry(max = 3)]
fn in_a_macro(body: Vec<u8>) -> std::io::Result<usize> {
    println!("{}", body.len());
    Ok(format!("{body:?}").len())
}

#[retry(max = 3)]
async fn copied_async(n: u64) -> std::io::Result<u64> {
    by_number(n)
}

#[derive(Clone)]
struct Order {
    id: u64,
    lines: Vec<u8>,
}

#[retry(max = 3)]
fn copied_field(order: Order) -> std::io::Result<u64> {
    by_number(order.id)
}

#[retry(max = 3)]
fn destructured(order: Order) -> std::io::Result<u64> {
    let Order { id, .. } = order;
    let Order { ref lines, .. } = order;
    by_number(id + lines.len() as u64)
}

#[retry(max = 3, clone(order))]
fn cloned_then_split(order: Order) -> std::io::Result<usize> {
    let _ = by_number(order.id)?;
    consume(order.lines)
}

type Log<'a> = &'a mut Vec<u8>;

fn append(log: &mut Vec<u8>) -> std::io::Result<usize> {
    log.push(1);
    Ok(log.len())
}

#[retry(max = 3)]
fn reborrowed(log: Log<'_>) -> std::io::Result<usize> {
    append(log)
}

struct Context<'a> {
    log: &'a mut Vec<u8>,
}

#[retry(max = 3)]
fn reborrowed_field(context: Context<'_>) -> std::io::Result<usize> {
    append(context.log)
}

fn main() {
    let _ = copied(1, Point { x: 2 });
    let _ = borrowed(Vec::new());
    let _ = cloned(Vec::new());
    let _ = bound_again(Vec::new());
    let _ = in_a_macro(Vec::new());
    let _ = copied_async(1);
    let order = || Order {
        id: 1,
        lines: Vec::new(),
    };
    let _ = copied_field(order());
    let _ = cloned_then_split(order());
    let _ = destructured(order());
    let mut log = Vec::new();
    let _ = reborrowed(&mut log);
    let _ = reborrowed_field(Context { log: &mut log });
}

#[retry(max = 3, clone(r#type))]
fn raw_and_cloned(r#type: String) -> std::io::Result<usize> {
    Ok(r#type.len())
}

#[allow(dead_code)]
fn uses_raw() {
    let _ = raw_and_cloned(String::new());
}
