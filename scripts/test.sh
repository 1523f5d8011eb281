#!/usr/bin/env bash
# The README's test command: installs what is missing, builds rpe, and runs the
# whole test suite (lit regression tests + GoogleTest unit tests through lit).
# Ends with one line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
./scripts/build.sh "$BUILD_DIR"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" 2>&1 | tee "$log" || status=$?

count() { # the number after "<label>:" in lit's summary, or 0
  sed -nE "s/^ *$1: *([0-9]+).*/\1/p" "$log" | tail -n 1 | grep . || echo 0
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count Unresolved) + $(count 'Timed Out') \
           + $(count 'Unexpectedly Passed') ))
if (( passed == 0 && failed == 0 )); then
  echo "test.sh: lit ran no test" >&2
  failed=1
fi
echo "$passed passed, $failed failed"
if (( status != 0 || failed != 0 )); then exit 1; fi
