#!/usr/bin/env bash
# Configures (once) and builds the sanitized configuration: clang-22,
# RPE_SANITIZE=address,undefined, the libFuzzer targets (RPE_FUZZ=ON).
#   ./scripts/build-sanitized.sh BUILD_DIR [TARGET...]   (default: all mlir-doc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:?usage: build-sanitized.sh BUILD_DIR [TARGET...]}
shift
JOBS=${JOBS:-2}
./scripts/install-deps.sh
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DRPE_SANITIZE=address,undefined -DRPE_FUZZ=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
if (($# == 0)); then set -- all mlir-doc; fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target "$@"
