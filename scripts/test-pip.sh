#!/usr/bin/env bash
# The pip route (pyproject.toml, scikit-build-core): `pip install` of this
# checkout into a fresh virtual environment, then, from another directory,
# `import rpe; rpe.compile(...)` checked against NumPy, `python -m rpe`, and
# the rpe-opt / rpe-compile console entry points. Builds rpe from scratch in
# build-wheel/ (about as long as scripts/build.sh), so it is not part of
# scripts/test.sh; run it after changing the packaging. Prints
# "N passed, N failed" last.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
./scripts/install-deps.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv "$work/venv"
py=$work/venv/bin/python
echo "== pip install $src (into $work/venv) =="
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q "$src"

passed=0 failed=0
check() { # $1 = name, rest = command
  local name=$1; shift
  if (cd "$work" && "$@"); then
    echo "PASS: $name"; passed=$((passed + 1))
  else
    echo "FAIL: $name"; failed=$((failed + 1))
  fi
}

check "the package is the installed one" "$py" -c '
import os, sys, rpe, rpe._capi as c
path = c.library_path()
assert path.startswith(sys.prefix), path
assert os.path.dirname(rpe.__file__).startswith(sys.prefix), rpe.__file__
print(rpe.__file__, path)'

check "rpe.compile against NumPy" "$py" -c '
import numpy as np, rpe
m = rpe.compile("""
func.func @clip_bias(%t: tensor<9x4xf32>, %l: index) -> tensor<4x?x?xf32> {
  %0 = rpe.relative_bias %t sizes(%l, %l) by clip<max_distance = 4> : tensor<9x4xf32> -> tensor<4x?x?xf32>
  return %0 : tensor<4x?x?xf32>
}""")
rng = np.random.default_rng(0)
table = rng.standard_normal((9, 4)).astype(np.float32)
L = 13
got = m.clip_bias(table, L)
i, j = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
want = table[np.clip(i - j, -4, 4) + 4].transpose(2, 0, 1)
assert got.shape == (4, L, L), got.shape
np.testing.assert_array_equal(got, want)
print("clip bias matches NumPy exactly")'

check "python -m rpe" "$py" -m rpe --help
check "rpe-opt --version" sh -c "'$work/venv/bin/rpe-opt' --version | grep -q 'rpe 0.1'"
check "rpe-compile --version" sh -c "'$work/venv/bin/rpe-compile' --version | grep -q 'rpe 0.1'"
check "rpe-opt on an rpe file" sh -c "'$work/venv/bin/rpe-opt' '$src/examples/demo.mlir' -canonicalize | grep -q 'arith.constant 31 : index'"
check "rpe-compile a shared library" sh -c "'$work/venv/bin/rpe-compile' '$src/examples/demo.mlir' --emit=shared -o '$work/demo.so' --header '$work/demo.h' && grep -q _mlir_ciface_biases '$work/demo.h'"

echo "$passed passed, $failed failed"
((failed == 0))
