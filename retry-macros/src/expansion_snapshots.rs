//! What `#[retry(max = 3)]` makes of a plain sync function, a plain async
//! one and a hedged one, printed as a reader would see it and held to the
//! files in `snapshots/`, so that every change to an expansion (and to its
//! size) is seen in review. After a change that is meant:
//!
//! ```sh
//! UPDATE_SNAPSHOTS=1 cargo test -p reattempt-macros expansion
//! git diff retry-macros/snapshots
//! ```

use std::path::PathBuf;

/// The expansion of `args` on `item`, formatted.
fn expanded(args: &str, item: &str) -> String {
    let tokens = crate::retry_impl(args.parse().unwrap(), item.parse().unwrap());
    let file = syn::parse2::<syn::File>(tokens).expect("an expansion is a valid item");
    prettyplease::unparse(&file)
}

/// Holds `args` on `item` to `snapshots/<name>.rs`, or writes that file
/// when `UPDATE_SNAPSHOTS` is set.
fn holds(name: &str, args: &str, item: &str) {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "snapshots",
        &format!("{name}.rs"),
    ]
    .iter()
    .collect();
    let now = format!("// #[retry({args})]\n// {item}\n\n{}", expanded(args, item));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        assert!(
            std::env::var_os("CI").is_none(),
            "UPDATE_SNAPSHOTS would pass every snapshot unchecked"
        );
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        before == now,
        "the expansion of {name} is not {}; if the change is meant, run \
         UPDATE_SNAPSHOTS=1 cargo test -p reattempt-macros expansion\n\n{now}",
        path.display()
    );
}

#[test]
fn expansion_of_a_plain_sync_function() {
    holds(
        "sync",
        "max = 3",
        "fn fetch(url: &str) -> std::io::Result<String> { get(url) }",
    );
}

#[test]
fn expansion_of_a_plain_async_function() {
    holds(
        "async",
        "max = 3",
        "async fn fetch(url: &str) -> std::io::Result<String> { get(url).await }",
    );
}

#[test]
fn expansion_of_a_hedged_async_function() {
    holds(
        "hedged",
        "max = 3, hedge = 50ms",
        "async fn fetch(url: &str) -> std::io::Result<String> { get(url).await }",
    );
}
