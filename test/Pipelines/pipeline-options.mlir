// Pipeline options that no pass would report, or would report only as a
// failure of the whole module, are checked when the pipeline string is
// parsed: an error, exit 1, no IR (no "see current operation" dump). An
// unknown target-cpu used to shape the kernel for the baseline (4 lanes, no
// FMA) silently, and an unknown format made gpu-module-to-binary print an
// error and exit 0.
// RUN: not rpe-opt %s -rpe-cpu-pipeline="target-cpu=nonsense" 2>&1 | FileCheck %s --check-prefix=CPU --implicit-check-not="current operation"
// CPU: error: rpe-cpu-pipeline: unknown target-cpu 'nonsense' for {{.*}} (expected native, generic or an LLVM CPU name, e.g. x86-64-v3)
// RUN: not rpe-opt %s --pass-pipeline="builtin.module(rpe-cpu-pipeline{target-cpu=nonsense})" 2>&1 | FileCheck %s --check-prefix=CPU --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-cpu-pipeline="tile-q=0" 2>&1 | FileCheck %s --check-prefix=TILE --implicit-check-not="current operation"
// TILE: error: rpe-cpu-pipeline: tile-q and tile-k must be positive, got 0 and 64
// RUN: not rpe-opt %s -rpe-cpu-pipeline="vector-width=3" 2>&1 | FileCheck %s --check-prefix=WIDTH --implicit-check-not="current operation"
// WIDTH: error: rpe-cpu-pipeline: vector-width must be 0 (from target-cpu) or a power of two in 2..64, got 3
// RUN: not rpe-opt %s -rpe-cpu-pipeline="vector-width=1" 2>&1 | FileCheck %s --check-prefix=WIDTH1 --implicit-check-not="current operation"
// WIDTH1: error: rpe-cpu-pipeline: vector-width must be 0 (from target-cpu) or a power of two in 2..64, got 1
// RUN: not rpe-opt %s -rpe-cpu-pipeline="num-threads=5000" 2>&1 | FileCheck %s --check-prefix=THREADS --implicit-check-not="current operation"
// THREADS: error: rpe-cpu-pipeline: num-threads must be at most 1024, got 5000
// RUN: not rpe-opt %s -rpe-cpu-pipeline="matmul-tile-m=0" 2>&1 | FileCheck %s --check-prefix=MTILE --implicit-check-not="current operation"
// MTILE: error: rpe-cpu-pipeline: matmul-tile-m and gpu-tile-k must be positive, got 0 and 8
// RUN: not rpe-opt %s -rpe-cpu-pipeline="matmul-tile-m=100000" 2>&1 | FileCheck %s --check-prefix=MTILEBIG --implicit-check-not="current operation"
// MTILEBIG: error: rpe-cpu-pipeline: rpe-vectorize-contractions: tile-m and tile-n must be in [1, 16], got 100000 and {{4|2}}
// RUN: not rpe-opt %s -rpe-cpu-pipeline="gpu-emulation=1 gpu-thread-tile-rows=0" 2>&1 | FileCheck %s --check-prefix=GPUTHREADTILE --implicit-check-not="current operation"
// GPUTHREADTILE: error: rpe-cpu-pipeline: gpu-thread-tile-rows and gpu-thread-tile-columns must be in 1..16, got 0 and 4
// Options where 0 means the default: a negative value used to mean it too.
// RUN: not rpe-opt %s -rpe-cpu-pipeline="key-block=-3" 2>&1 | FileCheck %s --check-prefix=NEGBLOCK --implicit-check-not="current operation"
// NEGBLOCK: error: rpe-cpu-pipeline: key-block must not be negative, got -3
// RUN: not rpe-opt %s -rpe-cpu-pipeline="outline-min-repeats=-1" 2>&1 | FileCheck %s --check-prefix=NEGOUT --implicit-check-not="current operation"
// NEGOUT: error: rpe-cpu-pipeline: outline-min-repeats must not be negative, got -1
// RUN: not rpe-opt %s -rpe-cpu-pipeline="matmul-pack-min-rows=-1" 2>&1 | FileCheck %s --check-prefix=NEGPACK --implicit-check-not="current operation"
// NEGPACK: error: rpe-cpu-pipeline: matmul-pack-min-rows must not be negative, got -1
// The vector kernel's constraints, on the options the pipeline resolves.
// RUN: not rpe-opt %s -rpe-cpu-pipeline="target-cpu=x86-64-v4 vector-tile-q=20" 2>&1 | FileCheck %s --check-prefix=VTILE --implicit-check-not="current operation"
// VTILE: error: rpe-cpu-pipeline: rpe-vectorize-attention: tile-q must be a positive multiple of vector-width (16) and at most 16 vectors, got 20
// A key tile whose scores alone overflow a thread's stack (100000 × 64 f32:
// 25000 KiB); the rest of an op's scratch: vectorize-attention-invalid.mlir.
// RUN: not rpe-opt %s -rpe-cpu-pipeline="target-cpu=x86-64-v4 tile-k=100000" 2>&1 | FileCheck %s --check-prefix=STACK --implicit-check-not="current operation"
// STACK: error: rpe-cpu-pipeline: rpe-vectorize-attention: tile-k x tile-q (100000 x 64) scores take 25000 KiB of stack per thread, more than max-stack-kib = 2048
// The size is exact however large (a saturated product printed 2^54 KiB).
// RUN: not rpe-opt %s -rpe-cpu-pipeline="target-cpu=x86-64-v4 tile-k=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=STACKHUGE
// STACKHUGE: error: rpe-cpu-pipeline: rpe-vectorize-attention: tile-k x tile-q (4611686018427387904 x 64) scores take 1152921504606846976 KiB of stack per thread, more than max-stack-kib = 2048
// (decode-rows: cpu-pipeline-vector.mlir.)
// With vectorize=0 the vector kernel's options are not used.
// RUN: rpe-opt %s -rpe-cpu-pipeline="vectorize=0 vector-tile-q=20" | FileCheck %s --check-prefix=OK
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="chip=foo" 2>&1 | FileCheck %s --check-prefix=CHIP --implicit-check-not="current operation"
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="chip=sm_60" 2>&1 | FileCheck %s --check-prefix=CHIP60 --implicit-check-not="current operation"
// CHIP: error: rpe-nvptx-pipeline: unknown chip 'foo' (expected sm_70 or later, e.g. sm_80, sm_90, sm_90a)
// CHIP60: error: rpe-nvptx-pipeline: unknown chip 'sm_60'
// A chip of the right form that LLVM's NVPTX backend does not know.
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="chip=sm_999" 2>&1 | FileCheck %s --check-prefix=CHIP999 --implicit-check-not="not a recognized processor"
// CHIP999: error: rpe-nvptx-pipeline: unknown chip 'sm_999'
// PTX features: an ISA version older than the chip's was a fatal LLVM
// error with no location (and the default, +ptx80, failed every chip after
// sm_90a); an unknown name was a warning, and ignored.
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="features=+ptx60" 2>&1 | FileCheck %s --check-prefix=PTX60 --implicit-check-not="LLVM ERROR"
// PTX60: error: rpe-nvptx-pipeline: features '+ptx60' ask for PTX ISA 6.0, which does not know sm_80 (it needs +ptx70 or later)
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="chip=sm_90a features=+ptx78" 2>&1 | FileCheck %s --check-prefix=PTX78
// PTX78: error: rpe-nvptx-pipeline: features '+ptx78' ask for PTX ISA 7.8, which does not know sm_90a (it needs +ptx80 or later)
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="chip=sm_120 features=+ptx86" 2>&1 | FileCheck %s --check-prefix=PTX86
// PTX86: error: rpe-nvptx-pipeline: features '+ptx86' ask for PTX ISA 8.6, which does not know sm_120 (it needs +ptx87 or later)
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="features=+ptx80,+bogus" 2>&1 | FileCheck %s --check-prefix=FEATNAME --implicit-check-not="not a recognized feature"
// FEATNAME: error: rpe-nvptx-pipeline: unknown NVPTX feature 'bogus' (e.g. +ptx80, +ptx86)
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="features=ptx80" 2>&1 | FileCheck %s --check-prefix=FEATSIGN
// FEATSIGN: error: rpe-nvptx-pipeline: feature 'ptx80' must begin with + or -
// The minimum is LLVM's: the version named in the error passes, and LLVM's
// own default for the chip (llc) is that version.
// RUN: rpe-opt %S/nvptx-pipeline-contractions.mlir -rpe-nvptx-pipeline="chip=sm_120 features=+ptx87 format=isa" | FileCheck %s --check-prefix=ISA87
// ISA87: .version 8.7
// RUN: echo "define void @g() { ret void }" | llc -mtriple=nvptx64 -mcpu=sm_120 -o - | FileCheck %s --check-prefix=ISA87
// RUN: echo "define void @g() { ret void }" | llc -mtriple=nvptx64 -mcpu=sm_90a -o - | FileCheck %s --check-prefix=ISA80
// ISA80: .version 8.0
// An empty features option: +ptx80 up to sm_90a, the chip's own minimum
// after it.
// RUN: rpe-opt %S/nvptx-pipeline-contractions.mlir -rpe-nvptx-pipeline="chip=sm_90 features= format=isa" | FileCheck %s --check-prefix=ISA80
// RUN: rpe-opt %S/nvptx-pipeline-contractions.mlir -rpe-nvptx-pipeline="chip=sm_100 format=isa" | FileCheck %s --check-prefix=ISA86
// ISA86: .version 8.6
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="format=xyz" 2>&1 | FileCheck %s --check-prefix=FORMAT --implicit-check-not="current operation"
// FORMAT: error: rpe-nvptx-pipeline: format must be isa, bin or fatbin, got 'xyz'
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="opt-level=7" 2>&1 | FileCheck %s --check-prefix=LEVEL --implicit-check-not="current operation"
// LEVEL: error: rpe-nvptx-pipeline: opt-level must be 0..3, got 7
// The options of the passes the NVPTX pipeline builds, checked with it.
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="mma-tile-k=24" 2>&1 | FileCheck %s --check-prefix=MMA --implicit-check-not="current operation"
// MMA: error: rpe-nvptx-pipeline: rpe-gpu-attention: mma-block-rows and mma-tile-k must be positive multiples of 16 and mma-threads 1 or a positive multiple of 32, got 64, 24 and 256
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="block-rows=0" 2>&1 | FileCheck %s --check-prefix=ROWS --implicit-check-not="current operation"
// ROWS: error: rpe-nvptx-pipeline: rpe-gpu-attention: block-rows, tile-k and max-head-dim must be positive, got 0, 8 and 256
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="block-size=2048" 2>&1 | FileCheck %s --check-prefix=BLOCK --implicit-check-not="current operation"
// BLOCK: error: rpe-nvptx-pipeline: block-size must be in 1..1024, got 2048
// RUN: not rpe-opt %s -rpe-nvptx-pipeline="thread-tile-columns=17" 2>&1 | FileCheck %s --check-prefix=THREADTILE --implicit-check-not="current operation"
// THREADTILE: error: rpe-nvptx-pipeline: thread-tile-rows and thread-tile-columns must be in 1..16, got 4 and 17
//
// Known CPU names pass: generic, a CPU of the host's (x86) target.
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=generic" | FileCheck %s --check-prefix=OK
// RUN: rpe-opt %s -rpe-cpu-pipeline="target-cpu=x86-64-v3" | FileCheck %s --check-prefix=OK
// OK: llvm.func @f
func.func @f(%x: f32) -> f32 {
  return %x : f32
}
