#!/usr/bin/env python3
"""Whether the AVX2 kernel's register blocks can run at the FMA peak on this
core: the inner step of its score and output loops (3 row vectors loaded,
then per key one `vbroadcastss` from memory and 3 FMAs into 12 accumulators)
against the same 12 FMAs with a full vector load per key instead of the
broadcast, and with register operands only (the peak). One thread, inline
assembly (the compiler cannot reorder or fold anything), median of 5.

    python3 bench/fma_operand_probe.py

Prints GFLOP/s per form and its ratio to the register-only form; on a core
where the broadcasts take FMA issue slots the first ratio drops toward 0.75
(16 issues per 12 FMAs). Needs cc and an x86-64 CPU with AVX2 and FMA.
"""
import os
import statistics
import subprocess
import sys
import tempfile

STEP_LOADS = """
    "vmovaps (%0),%%ymm12\\n vmovaps 32(%0),%%ymm13\\n vmovaps 64(%0),%%ymm14\\n"
"""
# One key of a 4-key block: its element (broadcast or vector), 3 FMAs.
KEY = """
    "{op} {off}(%0),%%ymm15\\n"
    "vfmadd231ps %%ymm12,%%ymm15,%%ymm{a}\\n"
    "vfmadd231ps %%ymm13,%%ymm15,%%ymm{b}\\n"
    "vfmadd231ps %%ymm14,%%ymm15,%%ymm{c}\\n"
"""
REGISTERS = "".join(
    '    "vfmadd231ps %%ymm{0},%%ymm15,%%ymm{1}\\n"\n'.format(12 + k % 3, k)
    for k in range(12))


# Zero accumulators, normal operands (garbage could be denormal: slow).
INIT = "".join('    "vxorps %%ymm{0},%%ymm{0},%%ymm{0}\\n"\n'.format(k)
               for k in range(12)) + "".join(
    '    "vmovaps {0}(%0),%%ymm{1}\\n"\n'.format(512 + 32 * k, 12 + k)
    for k in range(4))


def body(op):
    if op is None:
        return REGISTERS
    return STEP_LOADS + "".join(
        KEY.format(op=op, off=256 * (k + 1), a=3 * k, b=3 * k + 1,
                   c=3 * k + 2) for k in range(4))


C = r"""
#include <stdio.h>
#include <time.h>
static float buf[2048] __attribute__((aligned(64)));
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(void) {
  long iters = 100000000;
  for (int i = 0; i < 2048; ++i) buf[i] = 1e-3f * (i % 7 + 1);
  double t = now();
  __asm__ volatile(
INIT
    "mov %1, %%rcx\n"
    "1:\n"
BODY
    "dec %%rcx\n jne 1b\n"
    :: "r"(buf), "r"(iters) : "rcx", "memory", "xmm0", "xmm1", "xmm2", "xmm3",
       "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
       "xmm12", "xmm13", "xmm14", "xmm15");
  double s = now() - t;
  printf("%.2f\n", 12.0 * 16 * iters / s * 1e-9);
  return 0;
}
"""


def run(op, tmp, name):
    src, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
    with open(src, "w") as f:
        f.write(C.replace("INIT", INIT).replace("BODY", body(op)))
    subprocess.run(["cc", "-O2", "-march=x86-64-v3", src, "-o", exe],
                   check=True)
    return statistics.median(
        float(subprocess.run([exe], check=True, capture_output=True,
                             text=True).stdout) for _ in range(5))


def main():
    forms = [("registers only (peak)", None, "regs"),
             ("vbroadcastss per key (the kernel)", "vbroadcastss", "bcast"),
             ("vmovaps per key", "vmovaps", "load")]
    with tempfile.TemporaryDirectory() as tmp:
        results = [(label, run(op, tmp, name)) for label, op, name in forms]
    peak = results[0][1]
    for label, gf in results:
        print("%-36s %7.1f GFLOP/s  %.3f of the peak" % (label, gf, gf / peak))


if __name__ == "__main__":
    sys.exit(main())
