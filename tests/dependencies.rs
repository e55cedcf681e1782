//! The guide's chapter on crates and features names every crate that
//! `reattempt` brings with its default features.

use std::process::Command;

#[test]
fn the_guide_names_every_crate_the_default_features_bring() {
    let chapter = include_str!("../docs/guide/crates_and_features.md");
    let start = chapter
        .find("With default features, these are all the crates it brings")
        .expect("the section's opening sentence");
    let end = start
        + chapter[start..]
            .find("features that are off by default")
            .expect("its end");
    let section = &chapter[start..end];

    let tree = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "reattempt",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        tree.status.success(),
        "{}",
        String::from_utf8_lossy(&tree.stderr)
    );
    let tree = String::from_utf8(tree.stdout).unwrap();
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| !name.starts_with("reattempt"))
        .collect();
    assert!(crates.contains(&"tracing"), "{tree}");
    let missing: Vec<&&str> = crates
        .iter()
        .filter(|name| !section.contains(&format!("`{name}`")))
        .collect();
    assert!(missing.is_empty(), "the chapter does not name {missing:?}");
}
