#!/usr/bin/env bash
# The GPU checks on a bare machine with an NVIDIA GPU, from what
# scripts/gpu-bundle.sh prepared elsewhere (.gpu-bundle/: the CUDA runtime
# and the compiled modules; no compiler here): the differential suite's
# cuda configurations against the NumPy reference, then
# bench/gpu_attention_bench.py (needs torch). Logs go to $OUT (or
# ./gpu-out). Ends with "N passed, N failed" of the suite. Without
# arguments the benchmark runs a subset that fits a 10-minute device
# command with the suite (bf16, D = 64 and 128, causal and not, L = 2048
# and 8192, rpe's default kernel and the register-resident one with 32-
# and 64-key tiles and with 32 rows per warp: FlexAttention compiles once
# per shape); arguments
# replace it. Between the two, bench/gpu_kernel_profile.py times DeBERTa
# and Shaw with and without the contractions' register tiles.
# Each stage has a time limit (RPE_GPU_SUITE_SECONDS 300,
# RPE_GPU_PROFILE_SECONDS 90, RPE_GPU_BENCH_SECONDS 210 by default: 600 s
# in all, one device command; device time is minutes), and each test one of 120 s
# where pytest-timeout is installed (a hung kernel costs one test, not the
# run).
#   scripts/gpu-run.sh [BENCH ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
BUNDLE=$PWD/.gpu-bundle
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
[[ -f $BUNDLE/chip ]] || { echo "gpu-run: no $BUNDLE (run scripts/gpu-bundle.sh first)" >&2; exit 1; }
CHIP=$(cat "$BUNDLE/chip")
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 \
  RPE_MODULE_CACHE=$BUNDLE/modules RPE_CUDA_RUNTIME=$BUNDLE/librpe_cuda_runtime.so \
  RPE_TEST_CUDA=1 RPE_TEST_CUDA_CHIP=$CHIP RPE_DIFF_SKIP_PATHS=fused,tiles5x7,reference,gpu,gpu-registers
per_test=()
python3 -c "import pytest_timeout" 2> /dev/null &&
  per_test=(--timeout=120 --timeout-method=thread)
timeout "${RPE_GPU_SUITE_SECONDS:-300}" python3 -m pytest -q \
  -p no:cacheprovider -n "${RPE_TEST_JOBS:-8}" "${per_test[@]}" \
  python/tests/test_differential.py -k cuda 2>&1 | tee "$OUT/test.log"
# DeBERTa and Shaw with their projections' register tiles (the default)
# and without (one output per thread), D = 64, L = 2048.
timeout "${RPE_GPU_PROFILE_SECONDS:-90}" \
  python3 bench/gpu_kernel_profile.py --kinds shaw,deberta --head-dims 64 \
  --lengths 2048 --variants ";thread-tile-rows=1 thread-tile-columns=1" 2>&1 \
  | tee "$OUT/profile.log"
if (( $# == 0 )); then
  # rpe's default tensor-core kernel beside the register-resident one
  # (mma-registers, opt-in until measured here).
  set -- --dtypes bf16 --head-dims 64,128 --causal both --lengths 2048,8192 \
    --gpu-kernel-options ";mma-registers=1;mma-registers=1 mma-tile-k=64;mma-registers=1 mma-block-rows=128 mma-threads=128;mma-registers=1 mma-stage-views=0;mma-registers=1 mma-lazy-rescale=1"
fi
timeout "${RPE_GPU_BENCH_SECONDS:-210}" \
  python3 bench/gpu_attention_bench.py --plot "$OUT/gpu_attention.png" "$@" 2>&1 \
  | tee "$OUT/bench.log"
last=$(grep -E "[0-9]+ (passed|failed)" "$OUT/test.log" | tail -n 1)
passed=$(grep -oE "[0-9]+ passed" <<< "$last" | grep -oE "[0-9]+" || echo 0)
failed=0
for n in $(grep -oE "[0-9]+ (failed|errors?)" <<< "$last" | grep -oE "^[0-9]+"); do
  failed=$((failed + n))
done
(( ${passed:-0} == 0 && failed == 0 )) && failed=1  # nothing ran
echo "${passed:-0} passed, $failed failed"
