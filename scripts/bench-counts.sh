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

echo "## Instructions per call (callgrind, $calls calls)"
printf 'group\tvariant\tinstructions\n'
"$binary" variants | while read -r group variant; do
    base=$(instructions "$group" "$variant" 0)
    total=$(instructions "$group" "$variant" "$calls")
    awk -v g="$group" -v v="$variant" -v b="$base" -v t="$total" -v n="$calls" \
        'BEGIN { printf "%s\t%s\t%.1f\n", g, v, (t - b) / n }'
done

echo
echo "## Instructions per call of the success path with a subscriber that listens"
printf 'group\tvariant\tinstructions\n'
for group in sync async; do
    base=$(CALLS_SUBSCRIBER=1 instructions "$group" reattempt 0)
    total=$(CALLS_SUBSCRIBER=1 instructions "$group" reattempt "$calls")
    awk -v g="$group" -v b="$base" -v t="$total" -v n="$calls" \
        'BEGIN { printf "%s\treattempt\t%.1f\n", g, (t - b) / n }'
done

echo
echo "## Instructions per call of the success path with the metrics feature"
cargo bench -p benches --bench calls --no-run --features reattempt/metrics \
    --message-format=json-render-diagnostics >target/calls-metrics-build.json
plain=$binary
binary=$(grep -o '"executable":"[^"]*calls-[^"]*"' target/calls-metrics-build.json | tail -1 | cut -d'"' -f4)
printf 'group\tvariant\tinstructions\n'
for group in sync async; do
    base=$(instructions "$group" reattempt 0)
    total=$(instructions "$group" reattempt "$calls")
    awk -v g="$group" -v b="$base" -v t="$total" -v n="$calls" \
        'BEGIN { printf "%s\treattempt\t%.1f\n", g, (t - b) / n }'
done
binary=$plain

echo
echo "## Heap allocations per call"
printf 'group\tvariant\tallocations\n'
"$binary" allocs

echo
echo "## Future sizes (bytes)"
printf 'group\tvariant\tbytes\n'
"$binary" sizes
