#!/usr/bin/env bash
# The README's main job: installs what is missing, builds rpe, and runs
# rpe-opt on examples/demo.mlir, before and after canonicalization.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
./scripts/build.sh "$BUILD_DIR"

echo "== examples/demo.mlir, parsed and verified =="
"$BUILD_DIR/bin/rpe-opt" examples/demo.mlir
echo
echo "== after -canonicalize (buckets folded, rotations composed, zero bias dropped) =="
"$BUILD_DIR/bin/rpe-opt" examples/demo.mlir -canonicalize
