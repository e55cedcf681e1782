//! The attribute given what users mistype: every argument list a few
//! edits away from a valid one (a token dropped, doubled, swapped or
//! replaced), on functions of every shape and on items that are none. Whatever it is given, it never
//! panics, which would fail the build with an internal error and no span,
//! and it never loses the function: a list it refuses is a compile error
//! beside the function as it was written.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Valid argument lists: each argument, and a few together.
const ARGUMENTS: &[&str] = &[
    "",
    "on = transient",
    "on = matches(E::A | E::B(_))",
    "on = |e: &std::io::Error| e.kind() == std::io::ErrorKind::Other",
    "max = 5",
    "max = unbounded, deadline = 10s",
    "max = forever",
    "backoff = exp",
    "backoff = exp(base = 100ms, factor = 1.5, max = 30s)",
    "backoff = fixed(200ms)",
    "backoff = linear(base = 1s, step = 500ms, max = 10s)",
    "backoff = fibonacci(base = 10ms, max = 1m)",
    "backoff = none",
    "backoff = |n| std::time::Duration::from_millis(u64::from(n))",
    "jitter",
    "jitter = proportional(0.25)",
    "jitter = decorrelated",
    "deadline = (std::time::Duration::from_secs(2))",
    "attempt_timeout = 1s",
    "retry_after = ignore, max_retry_after = 2m",
    "if_result = |v: &u64| *v == 0",
    "before = note, after = note, on_retry = note, on_give_up = note",
    "limit = LIMIT, budget = BUDGET, breaker = BREAKER",
    "breaker = classic(BREAKER)",
    "policy = dynamic()",
    "dead_letter = SINK, idempotent = false",
    "alert_after = 3, on_alert = page",
    "clone(x)",
    "nested = single, idempotent = key",
    "fields(x), name = \"orders.fetch\"",
    "preset = external_api, max = 2",
    "sleep = my_sleep",
    "hedge = 20ms",
    "hedge(after = 20ms, in_flight = 3), idempotent = key",
    "hedge(after = p95, min = 5ms)",
    "crate = reattempt",
    "max = 3, backoff = exp, jitter, deadline = 5s, fields(x)",
];

/// Functions of each shape the attribute reads, and items it refuses.
const FUNCTIONS: &[&str] = &[
    "fn f(x: u64) -> std::io::Result<u64> { body(x) }",
    "async fn f(x: u64) -> std::io::Result<u64> { body(x).await }",
    "pub(crate) fn f<T: Clone>(x: T, y: &str) -> Result<T, E> where T: Send { body(x, y) }",
    "fn f(&self, x: String) -> Result<String, E> { self.body(x) }",
    "async fn f(self: &Arc<Self>, x: u64) -> Result<u64, E> { self.body(x).await }",
    "unsafe fn f((a, b): (u8, u8), _: u8) -> Result<u8, E> { body(a, b) }",
    "fn f(x: u64) -> Option<u64> { body(x) }",
    "fn f() { body() }",
    "const fn f() -> Result<u8, E> { Ok(1) }",
    "extern \"C\" fn f() -> Result<u8, E> { body() }",
    "unsafe extern \"C\" fn f(x: i32, ...) -> Result<u8, E> { body(x) }",
    "fn f() -> impl Future<Output = Result<u8, E>> { async move { body().await } }",
    "fn f(&self) -> Result<u8, E>;",
    "struct S;",
    "impl S { fn f() {} }",
];

/// What an edit may put in: every kind of token, and the words and values
/// the arguments use.
const REPLACEMENTS: &[&str] = &[
    "0",
    "-1",
    "1.5",
    "1e309",
    "18446744073709551616",
    "\"x\"",
    "'c'",
    "b'c'",
    "true",
    "_",
    "=",
    ",",
    ":",
    ";",
    "..",
    "|",
    "&",
    "#",
    "!",
    "?",
    "@",
    "0s",
    "0ms",
    "1ns",
    "99999999999999999h",
    "4294967296",
    "max",
    "exp",
    "jitter",
    "none",
    "full",
    "unbounded",
    "forever",
    "deadline",
    "backoff",
    "on",
    "self",
    "crate",
    "async",
    "r#fn",
    "🦀",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "( )",
    "[ ]",
    "{ }",
];

/// A small generator of its own, so that every run tries the same edits
/// and a failure is reproduced by running the test again.
struct Edits(u64);

impl Edits {
    fn below(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let next = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        usize::try_from(next >> 33).unwrap() % n.max(1)
    }
}

/// The tokens of `stream` as text, a group's delimiters as tokens of their
/// own, so that an edit can reach inside a group or unbalance it.
fn atoms(stream: TokenStream, into: &mut Vec<String>) {
    for token in stream {
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                into.push(open.to_owned());
                atoms(group.stream(), into);
                into.push(close.to_owned());
            }
            other => into.push(other.to_string()),
        }
    }
}

fn edit(atoms: &mut Vec<String>, edits: &mut Edits) {
    let len = atoms.len();
    let at = edits.below(len);
    let replacement = REPLACEMENTS[edits.below(REPLACEMENTS.len())].to_owned();
    match edits.below(5) {
        0 if len > 0 => {
            atoms.remove(at);
        }
        1 if len > 0 => atoms.insert(at, atoms[at].clone()),
        2 if len > 1 => atoms.swap(at, (at + 1) % len),
        3 if len > 0 => atoms[at] = replacement,
        _ => atoms.insert(at.min(len), replacement),
    }
}

#[test]
fn edited_arguments_never_panic_and_never_lose_the_function() {
    let mut edits = Edits(0x9e37_79b9_7f4a_7c15);
    let mut tried = 0;
    let mut refused = 0;
    for arguments in ARGUMENTS {
        let mut valid = Vec::new();
        atoms(arguments.parse().unwrap(), &mut valid);
        for function in FUNCTIONS {
            let item: TokenStream = function.parse().unwrap();
            for _ in 0..24 {
                let mut edited = valid.clone();
                for _ in 0..=edits.below(3) {
                    edit(&mut edited, &mut edits);
                }
                let text = edited.join(" ");
                // Only what the compiler could hand over: balanced tokens.
                let Ok(arguments) = text.parse::<TokenStream>() else {
                    continue;
                };
                let item = item.clone();
                let expanded = catch_unwind(AssertUnwindSafe(|| {
                    super::retry_impl(arguments, item.clone())
                }))
                .unwrap_or_else(|_| panic!("#[retry({text})] {function} panicked"));
                let expanded = expanded.to_string();
                if expanded.contains("compile_error") {
                    refused += 1;
                    assert!(
                        expanded.starts_with(&item.to_string()),
                        "#[retry({text})] {function} lost the function: {expanded}"
                    );
                }
                tried += 1;
            }
        }
    }
    // Most edits of a valid list make an invalid one; some stay valid.
    assert!(tried > 6_000, "only {tried} edited lists were tried");
    assert!(refused > tried / 4, "{refused} of {tried} refused");
}
