#!/usr/bin/env bash
# Configures and builds rpe in the given directory (default: build/).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
JOBS=${JOBS:-2}
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target all mlir-doc
./scripts/register-python.sh
