#!/usr/bin/env bash
# Runs lit (through which the GoogleTest unit tests run too) and pytest on
# one build directory: ./scripts/run-suite.sh BUILD_DIR. Extra environment
# for the Python process (a preloaded sanitizer runtime) comes from
# $RPE_PYTHON_ENV ("VAR=value ..."). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: run-suite.sh BUILD_DIR}

log=$(mktemp)
pylog=$(mktemp)
trap 'rm -f "$log" "$pylog"' EXIT
status=0
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" 2>&1 | tee "$log" || status=$?

count() { # the number after "<label>:" in lit's summary, or 0 (lit pads
  # the labels to one width when a longer one, e.g. Unsupported, is listed)
  sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | tail -n 1 | grep . || echo 0
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count Unresolved) + $(count 'Timed Out') \
           + $(count 'Unexpectedly Passed') ))
if (( passed == 0 && failed == 0 )); then
  echo "run-suite: lit ran no test" >&2
  failed=$((failed + 1))
fi

# Python tests, with Debian's interpreter (python3-numpy, python3-pytest),
# on one worker per core (python3-pytest-xdist): most of their time is
# single-threaded kernel compilation. RPE_TEST_JOBS overrides the count.
# --dist loadgroup: the differential configurations that share a compiled
# module form one group (xdist_group), so one worker compiles it.
jobs=${RPE_TEST_JOBS:-$(nproc)}
# A hung test fails after 20 minutes (python3-pytest-timeout, as lit's
# per-test limit in test/lit.cfg.py) instead of holding the suite.
timeout_arg=()
if /usr/bin/python3 -c "import pytest_timeout" 2> /dev/null; then
  timeout_arg=(--timeout=1200)
fi
# shellcheck disable=SC2086
env ${RPE_PYTHON_ENV:-} RPE_BUILD_DIR="$PWD/$BUILD_DIR" \
  PYTHONPATH="$PWD/python" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "$jobs" --dist loadgroup \
  "${timeout_arg[@]}" python/tests 2>&1 \
  | tee "$pylog" || status=$?
pycount() { # "N <word>" in pytest's closing line, or 0
  tail -n 1 "$pylog" | grep -oE "[0-9]+ $1" | grep -oE "[0-9]+" || echo 0
}
pypassed=$(pycount passed)
pyfailed=$(( $(pycount failed) + $(pycount errors) + $(pycount error) ))
if (( pypassed == 0 && pyfailed == 0 )); then
  echo "run-suite: pytest ran no test" >&2
  pyfailed=1
fi
echo "$BUILD_DIR: lit: $passed passed, $failed failed; pytest: $pypassed passed, $pyfailed failed"
echo "$((passed + pypassed)) passed, $((failed + pyfailed)) failed"
if (( status != 0 && failed + pyfailed == 0 )); then exit 1; fi
(( failed + pyfailed == 0 ))
