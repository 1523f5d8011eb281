#!/usr/bin/env bash
# Runs rpe's libFuzzer targets (rpe-fuzz-pipeline: MLIR text through the
# passes and rpe-cpu-pipeline; rpe-fuzz-capi: rpeDescribeModule/rpeCompile)
# for SECONDS each (default 60), both at once, then every saved reproducer in
# fuzz/regressions/<target>/ once. Builds the sanitized configuration first
# (build-san/, see scripts/test-sanitized.sh).
#   ./scripts/fuzz.sh [SECONDS] [BUILD_DIR]
# Seeds: every .mlir file under test/ (split at "// -----"); the corpus grows
# in BUILD_DIR/fuzz/corpus/<target>; crashes land in
# BUILD_DIR/fuzz/artifacts/<target>/ (copy them to fuzz/regressions/ with
# the fix). Ends with "N passed, N failed" (one test per run and per
# reproducer).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
BUILD_DIR=${2:-build-san}
./scripts/build-sanitized.sh "$BUILD_DIR" rpe-fuzz-pipeline rpe-fuzz-capi

work="$BUILD_DIR/fuzz"
seeds="$work/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"
n=0
while IFS= read -r -d '' file; do
  # One seed per split-input-file chunk.
  awk -v dir="$seeds" -v base="$n" '
    /^\/\/ -----/ { part++; next }
    { print > (dir "/seed-" base "-" part+0 ".mlir") }' "$file"
  n=$((n + 1))
done < <(find test -name '*.mlir' -print0 | sort -z)

# allow_user_poisoning=0: see scripts/test-sanitized.sh. No leak checks
# (-detect_leaks=0): a context keeps what inputs intern by design, and
# libFuzzer would rerun every input that allocates more than it frees.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0
failed=0
pids=()
for target in pipeline capi; do
  mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
  "$BUILD_DIR/bin/rpe-fuzz-$target" -max_total_time="$SECONDS_EACH" \
    -dict=fuzz/rpe.dict -timeout=60 -rss_limit_mb=4096 -max_len=16384 \
    -detect_leaks=0 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$target/" \
    "$work/corpus/$target" "$seeds" > "$work/$target.log" 2>&1 &
  pids+=($!)
done
for i in 0 1; do
  target=$([[ $i == 0 ]] && echo pipeline || echo capi)
  if wait "${pids[$i]}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz: rpe-fuzz-$target found a crash:" >&2
    tail -n 40 "$work/$target.log" >&2
  fi
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' \
    "$work/$target.log" | tail -n 1)
  echo "fuzz: rpe-fuzz-$target: ${execs:-?} executions in ${SECONDS_EACH} s"
done

# Saved reproducers: each must now run cleanly.
for target in pipeline capi; do
  for input in fuzz/regressions/$target/*; do
    [[ -f "$input" ]] || continue
    if "$BUILD_DIR/bin/rpe-fuzz-$target" "$input" > "$work/repro.log" 2>&1; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "fuzz: reproducer $input fails:" >&2
      tail -n 40 "$work/repro.log" >&2
    fi
  done
done
echo "fuzz: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
(( failed == 0 ))
