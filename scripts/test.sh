#!/usr/bin/env bash
# The README's test command: installs what is missing, builds rpe, and runs
# the whole test suite in three stages:
#   1. build/: lit (regression, integration and GoogleTest unit tests) and
#      pytest (python/tests);
#   2. build-san/ (clang-22, RPE_SANITIZE=address,undefined): the same suites
#      on the sanitized build (scripts/test-sanitized.sh);
#   3. a 60-second run of each libFuzzer target and every saved reproducer
#      (scripts/fuzz.sh).
# RPE_QUICK=1 runs stage 1 only. Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh || exit 1
BUILD_DIR=${BUILD_DIR:-build}
./scripts/build.sh "$BUILD_DIR" || exit 1
summaries=("build ($SECONDS s since the start)")

total_passed=0
total_failed=0
stage() { # runs a stage; adds its closing "N passed, N failed" to the totals
  local log start=$SECONDS
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  local last
  last=$(tail -n 1 "$log")
  rm -f "$log"
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_passed=$((total_passed + BASH_REMATCH[1]))
    total_failed=$((total_failed + BASH_REMATCH[2]))
  else
    echo "test.sh: '$*' did not finish with a summary" >&2
    total_failed=$((total_failed + 1))
  fi
  summaries+=("$* ($((SECONDS - start)) s): $last")
}
stage ./scripts/run-suite.sh "$BUILD_DIR"
if [[ "${RPE_QUICK:-0}" != 1 ]]; then
  stage ./scripts/test-sanitized.sh
  stage ./scripts/fuzz.sh "${RPE_FUZZ_SECONDS:-60}"
fi
printf '%s\n' "${summaries[@]}"
echo "$total_passed passed, $total_failed failed"
(( total_failed == 0 ))
