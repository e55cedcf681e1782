#!/usr/bin/env bash
# The compile cost of `#[retry]` per annotated function, against the same
# functions written with backon and with no retry at all: a crate of N
# functions (N=200 by default) is generated for each, its dependencies are
# built once, and then only the crate itself is rebuilt, RUNS times (3 by
# default), for `cargo build --release` and for `cargo check`. The cost per
# function is (median of the variant - median of the plain crate) / N.
#
# Three shapes of crate: every function returning `io::Result<u64>`
# (shared); every function returning a type of its own (distinct), since
# code that is generic over the outcome type is made once per type; and
# `async fn`s returning `io::Result<u64>` (async).
#
#   scripts/compile-cost.sh            # N=200, 3 runs
#   N=400 RUNS=5 scripts/compile-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."

n=${N:-200}
runs=${RUNS:-3}
root=$(pwd)
work="$root/target/compile-cost"
mkdir -p "$work"

# The crate of one variant and shape: its manifest and N functions.
generate() {
    local variant=$1 shape=$2 dir="$work/$1-$2"
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "compile-cost-$variant-$shape"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
reattempt = { path = "$root" }
backon = "1"
EOF
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
                        echo "    (|| $call).retry(backon::ExponentialBuilder::default().with_max_times(4).with_jitter()).call()"
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

# Seconds of one rebuild of the crate alone (its dependencies are built).
rebuild() {
    local dir=$1 command=$2 start end
    touch "$dir/src/lib.rs"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    cargo $command --quiet --manifest-path "$dir/Cargo.toml" --target-dir "$work/target" >/dev/null
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { print e - s }'
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

declare -A seconds
for shape in shared distinct async; do
    for variant in plain reattempt backon; do
        generate "$variant" "$shape"
        for command in "build --release" "check"; do
            # The dependencies, and a first build of the crate, not counted.
            rebuild "$work/$variant-$shape" "$command" >/dev/null
            seconds[$variant-$shape,$command]=$(
                for _ in $(seq 1 "$runs"); do rebuild "$work/$variant-$shape" "$command"; done | median
            )
        done
    done
done

echo "## Compile cost per annotated function ($n functions, median of $runs rebuilds)"
printf '| variant | outcome types | release build (s) | ms per function | check (s) | ms per function |\n'
printf '|---|---|---:|---:|---:|---:|\n'
for shape in shared distinct async; do
    for variant in plain reattempt backon; do
        build=${seconds[$variant-$shape,build --release]}
        check=${seconds[$variant-$shape,check]}
        awk -v v="$variant" -v s="$shape" -v b="$build" -v c="$check" \
            -v pb="${seconds[plain-$shape,build --release]}" -v pc="${seconds[plain-$shape,check]}" -v n="$n" \
            'BEGIN { printf "| %s | %s | %.2f | %+.2f | %.2f | %+.2f |\n", v, s, b, (b - pb) * 1000 / n, c, (c - pc) * 1000 / n }'
    done
done
