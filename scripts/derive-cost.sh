#!/usr/bin/env bash
# The compile cost of `#[derive(Classified)]` per derived enum, against the
# same `impl Classified` written by hand: the instructions rustc executes
# (callgrind) to build a crate of 40 enums less one of 20, divided by 20,
# for `cargo check` and `cargo build --release`. Each enum has four
# variants: an `io::Error` and a boxed error delegated to, a validation
# class with a code, and a transient class.
#
#   scripts/derive-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work="$root/target/derive-cost"
mkdir -p "$work"

# The crate of one variant (derived or by_hand) with $2 enums.
generate() {
    local variant=$1 n=$2 dir="$work/$1-$2"
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "derive-cost-$variant-$n"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
reattempt = { path = "$root" }
EOF
    {
        echo '#![allow(dead_code, unused_imports)]'
        echo 'use reattempt::{Class, Classification, Classified};'
        for i in $(seq 1 "$n"); do
            [ "$variant" = derived ] && echo '#[derive(Debug, Classified)]' || echo '#[derive(Debug)]'
            echo "pub enum E$i {"
            echo '    Io(std::io::Error),'
            echo '    Boxed(Box<dyn std::error::Error + Send + Sync>),'
            [ "$variant" = derived ] && echo '    #[classify(validation, code = "parse")]'
            echo '    Parse(String),'
            [ "$variant" = derived ] && echo '    #[classify(transient)]'
            echo '    Busy,'
            echo '}'
            if [ "$variant" = by_hand ]; then
                echo "impl Classified for E$i {"
                echo '    fn classification(&self) -> Classification {'
                echo '        match self {'
                echo "            E$i::Io(e) => e.classification(),"
                echo "            E$i::Boxed(e) => e.classification(),"
                echo "            E$i::Parse(_) => Classification::new(Class::Validation).with_code(\"parse\"),"
                echo "            E$i::Busy => Classification::new(Class::Transient),"
                echo '        }'
                echo '    }'
                echo '}'
            fi
        done
    } >"$dir/src/lib.rs"
}

# rustc under callgrind for the generated crates only.
wrapper="$root/scripts/count-rustc"
export COUNT_RUSTC_CRATE=derive_cost_

# Instructions rustc executes to rebuild the crate alone.
instructions() {
    local dir=$1 command=$2 out="$work/callgrind.out"
    touch "$dir/src/lib.rs"
    rm -f "$out"
    # shellcheck disable=SC2086
    COUNT_RUSTC_OUT="$out" RUSTC_WRAPPER="$wrapper" \
        cargo $command --quiet --manifest-path "$dir/Cargo.toml" --target-dir "$work/target" >/dev/null
    awk '/^summary:/ { print $2 }' "$out"
}

echo "## Instructions rustc executes per enum (callgrind: 40 enums less 20, over 20)"
echo
printf '| variant | release build (millions) | check (millions) |\n'
printf '|---|---:|---:|\n'
for variant in derived by_hand; do
    row="| $variant"
    for size in 20 40; do generate "$variant" "$size"; done
    for command in "build --release" "check"; do
        for size in 20 40; do
            # shellcheck disable=SC2086
            cargo $command --quiet --manifest-path "$work/$variant-$size/Cargo.toml" --target-dir "$work/target" >/dev/null
        done
        small=$(instructions "$work/$variant-20" "$command")
        large=$(instructions "$work/$variant-40" "$command")
        row+=$(awk -v s="$small" -v l="$large" 'BEGIN { printf " | %.1f", (l - s) / 20 / 1e6 }')
    done
    echo "$row |"
done
