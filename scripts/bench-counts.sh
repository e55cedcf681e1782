#!/usr/bin/env bash
# Instruction counts (callgrind), heap allocations and future sizes per call
# of `#[retry]` and its peers: the measurements of BENCHMARKS.md that do not
# depend on the machine's load. Timings are `cargo bench -p benches --bench overhead`;
# `benches/tests/published.rs` checks the published tables again.
#
# Instructions per call are the difference between a run of N calls and a
# run of none, divided by N, so that start-up and the runtime's set-up
# cancel out.
set -euo pipefail
cd "$(dirname "$0")/.."

calls=${CALLS:-20000}
# A fresh checkout has no target directory yet for the build logs below.
mkdir -p target

cargo bench -p benches --bench calls --no-run --message-format=json-render-diagnostics >target/calls-build.json
binary=$(grep -o '"executable":"[^"]*calls-[^"]*"' target/calls-build.json | tail -1 | cut -d'"' -f4)
[ -x "$binary" ] || { echo "could not find the calls benchmark binary" >&2; exit 1; }

instructions() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$binary" run "$@" >/dev/null 2>&1
    # The summary line holds the total instruction count of the run.
    awk '/^summary:/ { print $2 }' "$out"
    rm -f "$out"
}

# One line of a table: `group<TAB>variant<TAB>instructions per call`, as
# $binary and the environment stand.
per_call() {
    local base total
    base=$(instructions "$1" "$2" 0)
    total=$(instructions "$1" "$2" "$calls")
    awk -v g="$1" -v v="$2" -v b="$base" -v t="$total" -v n="$calls" \
        'BEGIN { printf "%s\t%s\t%.1f\n", g, v, (t - b) / n }'
}

# `#[retry]`'s success rows alone.
success_rows() {
    printf 'group\tvariant\tinstructions\n'
    for group in sync async; do
        per_call "$group" reattempt
    done
}

echo "## Instructions per call (callgrind, $calls calls)"
printf 'group\tvariant\tinstructions\n'
"$binary" variants | while read -r group variant; do
    per_call "$group" "$variant"
done

echo
echo "## Instructions per call of the success path with a subscriber that listens"
CALLS_SUBSCRIBER=1 success_rows

echo
echo "## Instructions per call of the success path with the metrics feature"
cargo bench -p benches --bench calls --no-run --features reattempt/metrics \
    --message-format=json-render-diagnostics >target/calls-metrics-build.json
plain=$binary
binary=$(grep -o '"executable":"[^"]*calls-[^"]*"' target/calls-metrics-build.json | tail -1 | cut -d'"' -f4)
success_rows
binary=$plain

echo
echo "## Instructions per call of the success path with \`throttle\` and \`fallback\`"
cargo bench -p benches --bench calls --no-run --features overload \
    --message-format=json-render-diagnostics >target/calls-overload-build.json
binary=$(grep -o '"executable":"[^"]*calls-[^"]*"' target/calls-overload-build.json | tail -1 | cut -d'"' -f4)
success_rows
printf 'group\tvariant\tallocations\n'
"$binary" allocs | awk -F'\t' '$2 == "reattempt"'
printf 'group\tvariant\tbytes\n'
"$binary" sizes | awk -F'\t' '$2 == "reattempt"'
binary=$plain

echo
echo "## Heap allocations per call"
printf 'group\tvariant\tallocations\n'
"$binary" allocs

echo
echo "## Future sizes (bytes)"
printf 'group\tvariant\tbytes\n'
"$binary" sizes
