#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU (and driver), after
# ./scripts/build.sh: the differential suite through rpe-nvptx-pipeline on
# the GPU (every op and RPE kind, f32/f16/bf16, odd lengths, causal, GQA,
# key_lengths including 0, q_offset) against the NumPy reference, and the
# runtime's own tests. Ends with "N passed, N failed".
#   RPE_TEST_CUDA_CHIP  architecture to compile for (default: the GPU's,
#                       from nvidia-smi; else sm_80)
#   RPE_TEST_JOBS       pytest workers (default: nproc)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [[ -z "${RPE_TEST_CUDA_CHIP:-}" ]] && command -v nvidia-smi > /dev/null; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
  [[ -n "$cap" ]] && RPE_TEST_CUDA_CHIP="sm_${cap/./}"
fi
export RPE_TEST_CUDA=1 RPE_TEST_CUDA_CHIP=${RPE_TEST_CUDA_CHIP:-sm_80}
echo "test-gpu: compiling for $RPE_TEST_CUDA_CHIP"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
RPE_BUILD_DIR="$PWD/$BUILD_DIR" PYTHONPATH="$PWD/python" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "${RPE_TEST_JOBS:-$(nproc)}" \
  python/tests/test_cuda_runtime.py "python/tests/test_differential.py" \
  -k "cuda or runtime or device" 2>&1 | tee "$log"
passed=$(tail -n 1 "$log" | grep -oE "[0-9]+ passed" | grep -oE "[0-9]+" || echo 0)
failed=$(tail -n 1 "$log" | grep -oE "[0-9]+ (failed|errors?)" | grep -oE "[0-9]+" | paste -sd+ | bc 2>/dev/null || echo 0)
(( passed == 0 && failed == 0 )) && failed=1
echo "$passed passed, ${failed:-0} failed"
(( ${failed:-0} == 0 ))
