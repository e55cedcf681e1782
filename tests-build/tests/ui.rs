//! Compile-time behaviour: `pass/` cases must compile, `fail/` cases must
//! fail with exactly the `.stderr` next to them.
//!
//! The messages are rustc's as much as ours, so they are checked on one
//! toolchain, rustc 1.95, and skipped on others. After changing a message,
//! run `TRYBUILD=overwrite cargo test --test ui` and review the `.stderr`
//! diff.

#[test]
#[rustversion::attr(not(stable(1.95)), ignore = "the .stderr files are rustc 1.95's")]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
