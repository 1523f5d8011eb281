#!/usr/bin/env bash
# Prepares, on a machine with the compiler, what the GPU checks need on a
# bare GPU machine (no LLVM, no network: scripts/gpu-run.sh there):
# .gpu-bundle/ (git-ignored) with librpe_cuda_runtime.so and every module
# the GPU differential suite and bench/gpu_attention_bench.py compile, for
# CHIP (default sm_90), kept by rpe.compile's module cache
# ($RPE_MODULE_CACHE). Needs ./scripts/build.sh first and the CUDA toolkit
# (ptxas), not a GPU. Prints the bundle's size: the device tool carries at
# most 64 MiB with the working tree.
#   scripts/gpu-bundle.sh [CHIP]
set -uo pipefail
cd "$(dirname "$0")/.."
CHIP=${1:-sm_90}
BUILD_DIR=${BUILD_DIR:-build}
BUNDLE=$PWD/.gpu-bundle
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/modules"
cp "$BUILD_DIR/lib/librpe_cuda_runtime.so" "$BUNDLE/" || exit 1
echo "$CHIP" > "$BUNDLE/chip"
export RPE_BUILD_DIR=$PWD/$BUILD_DIR PYTHONPATH=$PWD/python \
  RPE_MODULE_CACHE=$BUNDLE/modules RPE_MODULE_CACHE_RECORD=1
# The suite's cuda configurations compile here and then fail to run (no
# GPU): only compile errors count.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
RPE_TEST_CUDA=1 RPE_TEST_CUDA_CHIP=$CHIP /usr/bin/python3 -m pytest -q \
  -p no:cacheprovider -n "$(nproc)" python/tests/test_differential.py \
  -k cuda > "$log" 2>&1
if grep -q "CompileError" "$log"; then
  grep -m 5 "CompileError" "$log" >&2
  echo "gpu-bundle: some modules did not compile for $CHIP" >&2
  exit 1
fi
/usr/bin/python3 bench/gpu_attention_bench.py --compile-only "$CHIP" || exit 1
/usr/bin/python3 bench/gpu_kernel_profile.py --compile-only "$CHIP" || exit 1
# The register-resident tensor-core kernel (mma-registers), not yet the
# default: its T5 benchmark and its profile against the default kernel,
# with 32- and 64-key tiles, with 4 warps of 32 rows (two 16-row tiles per
# warp share each K and V fragment), and without the strided staging views
# (every tile's keys clamped, as before the views), and rescaling O only
# where a row's maximum grew (mma-lazy-rescale).
REG="mma-registers=1"
TILE_VARIANTS=";thread-tile-rows=1 thread-tile-columns=1"
VARIANTS="$REG;$REG mma-tile-k=64;$REG mma-block-rows=128 mma-threads=128"
VARIANTS="$VARIANTS;$REG mma-stage-views=0;$REG mma-lazy-rescale=1"
/usr/bin/python3 bench/gpu_attention_bench.py --compile-only "$CHIP" \
  --gpu-kernel-options="$VARIANTS" || exit 1
/usr/bin/python3 bench/gpu_kernel_profile.py --compile-only "$CHIP" \
  --kinds none,t5,alibi,swin --variants "$VARIANTS" || exit 1
# The contraction kernels (DeBERTa's and Shaw's projections) with and
# without register tiles (rpe-register-tile-reductions), for gpu-run.sh.
/usr/bin/python3 bench/gpu_kernel_profile.py --compile-only "$CHIP" \
  --kinds shaw,deberta --head-dims 64 --lengths 2048 \
  --variants "$TILE_VARIANTS" || exit 1
echo "gpu-bundle: $(ls "$BUNDLE/modules" | grep -c '\.so$') modules for $CHIP," \
  "$(du -sh "$BUNDLE" | cut -f1) in $BUNDLE"
