#!/usr/bin/env bash
# The sanitized configuration: rpe's code (rpe-opt, rpe-compile, librpe-c,
# the passes, the unit tests) built with clang-22 and
# RPE_SANITIZE=address,undefined in its own build directory (default
# build-san/, with the libFuzzer targets), then the lit suite and the Python
# suite on it; Python runs with the ASan runtime preloaded and loads the
# sanitized librpe-c.so and the kernels it compiles (the differential suite
# places their inputs against guard pages). Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-san}
./scripts/build-sanitized.sh "$BUILD_DIR"

runtime=$(clang++-22 -print-file-name=libclang_rt.asan-x86_64.so)
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs when
# compiled with ASan; rpe's code (instrumented) and libMLIR.so (not) share
# allocators through inline header code, so a slab poisoned by one side is
# written by the other: false use-after-poison reports. Leaks are not
# checked in Python (the interpreter keeps its objects); the tools (lit) run
# with LeakSanitizer on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:detect_odr_violation=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# What this stage adds to stage 1 is rpe's own code (the compiler, the C
# API, the CPU runtime) under ASan and UBSan; the kernels it compiles are
# the same machine code as in stage 1 (MLIR does not instrument them), and
# the differential suite's guard pages check their bounds in both stages.
# So the Python suites that compile the same module again with other
# constants run in stage 1 only (CI time):
# - of the differential suite's lowering paths, only the fused one with
#   the default tiles runs here: the 5×7 tiles (ragged tiles, the same
#   passes), the emulated GPU paths (the GPU passes run here through lit
#   and the model tests), the unfused reference path (plain linalg loops)
#   and the two-thread path (its passes, rpe-split-attention-heads and
#   rpe-serialize-nested-foralls, run here through lit and
#   test_vector_widths.py's DeBERTa thread tests) do not;
# - test_tensor_cores.py's emulated register kernel does not;
# - test_models.py and test_score_functions.py run their fused path only
#   (they honour RPE_DIFF_SKIP_PATHS too);
# - test_stack_scopes.py checks LLVM IR, the same in both stages: only its
#   self-test runs here.
# (This stage took 840 s on a 2-core machine with all of those but the
# reference and two-thread paths, and the integration modules of
# test_stack_scopes.py.)
RPE_PYTHON_ENV="LD_PRELOAD=$runtime ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 RPE_DIFF_SKIP_PATHS=tiles5x7,gpu,gpu-registers,reference,threads RPE_STACK_SCOPES_MODULES=0" \
  exec ./scripts/run-suite.sh "$BUILD_DIR"
