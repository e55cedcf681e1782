#!/usr/bin/env bash
# The compile cost of `#[retry]` per annotated function, against the same
# functions written with backon and with no retry at all: a crate of N
# functions (N=200 by default) is generated for each, its dependencies are
# built once, and then only the crate itself is rebuilt, RUNS times (3 by
# default), for `cargo build --release` and for `cargo check`. The cost per
# function is (median of the variant - median of the plain crate) / N, in
# wall-clock time and in CPU time (user + system: what the build costs on
# a machine with more cores, or busy with other work).
#
# Times move with the machine's load. INSTRUCTIONS=1 adds what does not:
# the instructions rustc executes (callgrind) to compile a crate of 40
# functions less one of 20, divided by 20, for each variant. It takes
# several minutes more. A check is counted twice: as cargo runs it after an
# edit elsewhere in the crate, with the incremental cache of the last
# check (rustc expands every attribute again, and checks again only what
# changed), and from nothing (CARGO_INCREMENTAL=0), as a first check or a
# CI run does.
#
# Four shapes of crate: every function returning `io::Result<u64>`
# (shared); every function returning a type of its own (distinct), since
# code that is generic over the outcome type is made once per type;
# `async fn`s returning `io::Result<u64>` (async); and the shared shape
# with a body of a dozen statements instead of one call (long), since the
# macro reads the tokens it is given.
#
# TIMES=0 leaves the timings out (with INSTRUCTIONS=1, only the counts);
# SHAPES names the shapes to measure. MACRO_OPT_LEVEL=N gives the generated
# crates `[profile.*.build-override] opt-level = N`, so that the attribute
# (and syn, quote and proc-macro2 under it) runs optimised, where cargo
# builds build-time code at opt-level 0 by default.
#
#   scripts/compile-cost.sh                   # N=200, 3 runs
#   N=400 RUNS=5 scripts/compile-cost.sh
#   INSTRUCTIONS=1 scripts/compile-cost.sh
#   TIMES=0 INSTRUCTIONS=1 SHAPES="shared distinct" scripts/compile-cost.sh
#   TIMES=0 INSTRUCTIONS=1 MACRO_OPT_LEVEL=3 scripts/compile-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."

n=${N:-200}
runs=${RUNS:-3}
shapes=${SHAPES:-shared distinct async long}
root=$(pwd)
work="$root/target/compile-cost${MACRO_OPT_LEVEL:+-opt$MACRO_OPT_LEVEL}"
# What each table's title adds when the build-time code is optimised.
optimised=${MACRO_OPT_LEVEL:+, build-time code at opt-level $MACRO_OPT_LEVEL}
mkdir -p "$work"

# The crate of one variant and shape with $3 functions, in
# $work/$variant-$shape-$3.
generate() {
    local variant=$1 shape=$2 n=$3 dir="$work/$1-$2-$3"
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "compile-cost-$variant-$shape-$n"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
reattempt = { path = "$root" }
backon = "1"
EOF
    if [ -n "${MACRO_OPT_LEVEL:-}" ]; then
        printf '\n[profile.%s.build-override]\nopt-level = %s\n' \
            dev "$MACRO_OPT_LEVEL" release "$MACRO_OPT_LEVEL" >>"$dir/Cargo.toml"
    fi
    {
        echo '#![allow(dead_code)]'
        echo '#[inline(never)]'
        echo 'pub fn body(x: u64) -> std::io::Result<u64> {'
        echo '    if std::hint::black_box(x) == u64::MAX { Err(std::io::ErrorKind::ConnectionReset.into()) } else { Ok(x) }'
        echo '}'
        for i in $(seq 1 "$n"); do
            local ty=u64 call="body(x + $i)" fn=fn
            if [ "$shape" = distinct ]; then
                echo "pub struct T$i(pub u64);"
                ty=T$i call="body(x + $i).map(T$i)"
            fi
            [ "$shape" = async ] && fn="async fn"
            if [ "$shape" = long ]; then
                call="let mut total = 0u64; for k in 0..x { if k % 3 == 0 { total += k * 2; } else { total = total.wrapping_mul(k + 1); } }"
                call+=" let parts: Vec<u64> = (0..total % 7).collect(); let first = parts.first().copied().unwrap_or_default();"
                call+=" if first > 10 { return Err(std::io::Error::other(\"too large\")); }"
                call+=" let mut seen = std::collections::HashMap::new(); seen.insert(first, total);"
                call+=" let value = seen.get(&first).copied().unwrap_or(0);"
                call+=" let checked = value.checked_add(x).ok_or_else(|| std::io::Error::other(\"overflow\"))?;"
                call+=" match body(checked + $i)? { 0 => Ok(1), n if n > 100 => Ok(n / 2), n => Ok(n) }"
            fi
            # What backon's closure returns: the body, in braces when it
            # has statements.
            local closure=$call
            [ "$shape" = long ] && closure="{ $call }"
            case $variant in
                plain)
                    echo "pub $fn f$i(x: u64) -> std::io::Result<$ty> { $call }" ;;
                reattempt)
                    echo "#[reattempt::retry(max = 5, backoff = exp, jitter)]"
                    echo "pub $fn f$i(x: u64) -> std::io::Result<$ty> { $call }" ;;
                backon)
                    echo "pub $fn f$i(x: u64) -> std::io::Result<$ty> {"
                    if [ "$shape" = async ]; then
                        echo "    use backon::Retryable;"
                        echo "    (|| async { $call }).retry(backon::ExponentialBuilder::default().with_max_times(4).with_jitter()).await"
                    else
                        echo "    use backon::BlockingRetryable;"
                        echo "    (|| $closure).retry(backon::ExponentialBuilder::default().with_max_times(4).with_jitter()).call()"
                    fi
                    echo "}" ;;
            esac
        done
        # A future is compiled where it is polled: poll each one here, each
        # from a function of its own, so that its code is this crate's, as
        # it is for a caller's.
        if [ "$shape" = async ]; then
            for i in $(seq 1 "$n"); do
                echo "pub fn poll_f$i(cx: &mut std::task::Context<'_>) -> bool {"
                echo "    std::future::Future::poll(std::pin::pin!(f$i(0)), cx).is_ready()"
                echo '}'
            done
        fi
    } >"$dir/src/lib.rs"
}

# Wall-clock and CPU seconds of one rebuild of the crate alone (its
# dependencies are built), on one line.
rebuild() {
    local dir=$1 command=$2 TIMEFORMAT='%R %U %S'
    touch "$dir/src/lib.rs"
    # shellcheck disable=SC2086
    { time cargo $command --quiet --manifest-path "$dir/Cargo.toml" --target-dir "$work/target" >/dev/null; } 2>&1 |
        awk '{ print $1, $2 + $3 }'
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if [ "${TIMES:-1}" = 1 ]; then
    declare -A wall cpu
    for shape in $shapes; do
        for variant in plain reattempt backon; do
            generate "$variant" "$shape" "$n"
            dir="$work/$variant-$shape-$n"
            for command in "build --release" "check"; do
                # The dependencies, and a first build of the crate, not counted.
                rebuild "$dir" "$command" >/dev/null
                times=$(for _ in $(seq 1 "$runs"); do rebuild "$dir" "$command"; done)
                wall[$variant-$shape,$command]=$(cut -d' ' -f1 <<<"$times" | median)
                cpu[$variant-$shape,$command]=$(cut -d' ' -f2 <<<"$times" | median)
            done
        done
    done

    echo "## Compile cost per annotated function ($n functions, median of $runs rebuilds)$optimised"
    echo
    echo "Milliseconds per function over the plain crate, and the crate's own seconds."
    echo
    printf '| variant | shape | release, wall | release, CPU | check, wall | check, CPU |\n'
    printf '|---|---|---:|---:|---:|---:|\n'
    for shape in $shapes; do
        for variant in plain reattempt backon; do
            row="| $variant | $shape"
            for command in "build --release" "check"; do
                for clock in wall cpu; do
                    declare -n of=$clock
                    row+=$(awk -v t="${of[$variant-$shape,$command]}" -v p="${of[plain-$shape,$command]}" -v n="$n" \
                        'BEGIN { printf " | %+.2f (%.2f s)", (t - p) * 1000 / n, t }')
                done
            done
            echo "$row |"
        done
    done
fi

[ "${INSTRUCTIONS:-0}" = 1 ] || exit 0

# rustc under callgrind for the generated crates only; the dependencies
# are compiled as usual.
wrapper="$root/scripts/count-rustc"
export COUNT_RUSTC_CRATE=compile_cost_

# Instructions rustc executes to rebuild the crate alone, and of those the
# attribute's own: its expansions, callees included (0 for a crate without
# it; "?" if this rustc names the expansion otherwise). $3, if given, is
# CARGO_INCREMENTAL's value.
instructions() {
    local dir=$1 command=$2 out="$work/callgrind.out" attribute
    touch "$dir/src/lib.rs"
    rm -f "$out"
    # shellcheck disable=SC2086
    COUNT_RUSTC_OUT="$out" RUSTC_WRAPPER="$wrapper" env ${3:+CARGO_INCREMENTAL=$3} \
        cargo $command --quiet --manifest-path "$dir/Cargo.toml" --target-dir "$work/target-counted" >/dev/null
    attribute=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
        awk '/AttrProcMacro as rustc_expand::base::AttrProcMacro>::expand \[/ { gsub(",", "", $1); print $1; exit }')
    if [ -z "$attribute" ]; then
        grep -q "reattempt::retry" "$dir/src/lib.rs" && attribute="?" || attribute=0
    fi
    echo "$(awk '/^summary:/ { print $2 }' "$out") $attribute"
}

echo
echo "## Instructions rustc executes per annotated function (callgrind: 40 functions less 20, over 20)$optimised"
echo
printf '| variant | shape | release build (millions) | check (millions) | of the check, the attribute (millions) | check from nothing (millions) |\n'
printf '|---|---|---:|---:|---:|---:|\n'
for shape in $shapes; do
    for variant in reattempt backon; do
        row="| $variant | $shape"
        for size in 20 40; do generate "$variant" "$shape" "$size"; done
        for command in "build --release" "check"; do
            # The dependencies, built without counting.
            for size in 20 40; do
                # shellcheck disable=SC2086
                cargo $command --quiet --manifest-path "$work/$variant-$shape-$size/Cargo.toml" \
                    --target-dir "$work/target-counted" >/dev/null
            done
            read -r small small_attribute <<<"$(instructions "$work/$variant-$shape-20" "$command")"
            read -r large large_attribute <<<"$(instructions "$work/$variant-$shape-40" "$command")"
            row+=$(awk -v s="$small" -v l="$large" 'BEGIN { printf " | %.1f", (l - s) / 20 / 1e6 }')
        done
        # The attribute's share, of the check (the last command counted).
        if [ "$small_attribute" = "?" ] || [ "$large_attribute" = "?" ]; then
            row+=" | ?"
        else
            row+=$(awk -v s="$small_attribute" -v l="$large_attribute" 'BEGIN { printf " | %.2f", (l - s) / 20 / 1e6 }')
        fi
        read -r small _ <<<"$(instructions "$work/$variant-$shape-20" check 0)"
        read -r large _ <<<"$(instructions "$work/$variant-$shape-40" check 0)"
        row+=$(awk -v s="$small" -v l="$large" 'BEGIN { printf " | %.1f", (l - s) / 20 / 1e6 }')
        echo "$row |"
    done
done
