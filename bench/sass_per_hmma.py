#!/usr/bin/env python3
"""Instructions per HMMA in a full key tile of rpe's tensor-core attention
kernels, counted in the SASS (issue 9). A static count, not a time: it
needs no GPU (rpe-compile, ptxas and nvdisasm only).

    python3 bench/sass_per_hmma.py [--chip sm_90] [--kinds none,t5]
        [--head-dim 64] [--variants "OPTIONS;OPTIONS;..."]

For each kind (none: bias-free; t5: 32 buckets, max distance 128; t5causal:
unidirectional T5, causal) and each
string of GPU kernel options (rpe-compile --gpu-kernel-options; "" is the
default kernel), compiles bf16 attention of dynamic length (B=4, H=16) to
a cubin, disassembles it and walks the attention kernel's key loop (its
outermost backward branch): the instructions one full key tile executes
are the loop body without the other scoring branches (the largest if /
else side without HMMA: the partial tile's, or with a causal mask the
masked full and the partial tiles'), without the misaligned staging
(the side whose global loads are 2-byte, no cp.async) and without the
clamped staging of the last tile (of two sides that both copy with
cp.async, the longer); inner loops count
`--trips` times (the register kernel has none). Prints the count, HMMA, instructions per HMMA,
the same per HMMA on a tile that skips its branches of FMULs only (O's
rescale with mma-lazy-rescale: a one-sided branch, taken where no row's
maximum grew; "-" where the kernel has none), ptxas' registers and spill
bytes, and the commonest opcodes.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODULES = {
    "none": """
func.func @attention(%q: tensor<4x16x?x{d}xbf16>, %k: tensor<4x16x?x{d}xbf16>, %v: tensor<4x16x?x{d}xbf16>) -> tensor<4x16x?x{d}xbf16> {{
  %0 = rpe.attention %q, %k, %v : tensor<4x16x?x{d}xbf16>, tensor<4x16x?x{d}xbf16>, tensor<4x16x?x{d}xbf16> -> tensor<4x16x?x{d}xbf16>
  return %0 : tensor<4x16x?x{d}xbf16>
}}
""",
    "t5": """
func.func @attention(%q: tensor<4x16x?x{d}xbf16>, %k: tensor<4x16x?x{d}xbf16>, %v: tensor<4x16x?x{d}xbf16>, %table: tensor<32x16xbf16>) -> tensor<4x16x?x{d}xbf16> {{
  %c2 = arith.constant 2 : index
  %lq = tensor.dim %q, %c2 : tensor<4x16x?x{d}xbf16>
  %lk = tensor.dim %k, %c2 : tensor<4x16x?x{d}xbf16>
  %bias = rpe.relative_bias %table sizes(%lq, %lk) by t5<num_buckets = 32, max_distance = 128, bidirectional = true> : tensor<32x16xbf16> -> tensor<16x?x?xbf16>
  %0 = rpe.attention %q, %k, %v bias(%bias : tensor<16x?x?xbf16>) : tensor<4x16x?x{d}xbf16>, tensor<4x16x?x{d}xbf16>, tensor<4x16x?x{d}xbf16> -> tensor<4x16x?x{d}xbf16>
  return %0 : tensor<4x16x?x{d}xbf16>
}}
""",
}
# Causal T5: a full tile below the warp's diagonal skips the causal mask too.
MODULES["t5causal"] = MODULES["t5"].replace(
    "bidirectional = true", "bidirectional = false").replace(
    "bias(%bias : tensor<16x?x?xbf16>)", "bias(%bias : tensor<16x?x?xbf16>) causal")


def tool(name):
    """A tool from the build tree, the CUDA toolkit, rpe's tool cache or
    PATH."""
    build = os.environ.get("RPE_BUILD_DIR", os.path.join(ROOT, "build"))
    cuda = os.environ.get("CUDA_ROOT", "/usr/local/cuda")
    for path in (os.path.join(build, "bin", name),
                 os.path.join(cuda, "bin", name),
                 os.path.expanduser("~/.cache/rpe-cuda-tools/bin/" + name)):
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if not found:
        sys.exit(f"sass_per_hmma: {name} not found")
    return found


def parse(sass, kernel):
    """The instructions of `kernel` and its labels' positions."""
    inside, ins, labels = False, [], {}
    for line in sass.splitlines():
        if line.startswith(".text."):
            inside = line[len(".text."):].rstrip(":") == kernel
            continue
        if not inside:
            continue
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if m:
            ins.append(m.group(1))
    return ins, labels


def full_tile(ins, labels, trips, dump=None):
    """Opcode counts of one full key tile (see the module docstring), and
    how many of them are in one-sided branches of FMULs only (a lazy
    rescale a tile may skip); the instructions counted are appended to the
    list `dump` if given."""
    def target(text):
        m = re.search(r"BRA\s+`?\(?(\.L_x_\d+)", text)
        return labels.get(m.group(1)) if m else None

    back = [(target(t), i) for i, t in enumerate(ins)
            if "BRA" in t and target(t) is not None and target(t) <= i]
    loops = [(a, b) for a, b in back
             if any("HMMA" in t for t in ins[a:b + 1])]
    if not loops:
        return None
    a, b = max(loops, key=lambda x: x[1] - x[0])
    inner = [(s, e) for s, e in back if (s, e) != (a, b) and a <= s
             and e <= b]
    # if / else: a conditional forward branch to j, whose then-side ends
    # with a branch over the else-side to k.
    sides = []
    for i in range(a, b):
        if not re.match(r"@!?P\d BRA", ins[i]):
            continue
        j = target(ins[i])
        if j is None or j <= i or not ins[j - 1].startswith("BRA"):
            continue
        k = target(ins[j - 1])
        if k is None or k <= j:
            continue
        sides += [(i + 1, j), (j, k)]
    skip = []
    partial = [s for s in sides
               if not any("HMMA" in t for t in ins[s[0]:s[1]])
               and any("FMNMX" in t for t in ins[s[0]:s[1]])]
    if partial:
        skip.append(max(partial, key=lambda s: s[1] - s[0]))
    skip += [s for s in sides
             if any("LDG.E.U16" in t for t in ins[s[0]:s[1]])
             and not any("LDGSTS" in t for t in ins[s[0]:s[1]])]
    # The full tile's cp.async staging against the clamped one (the last
    # tile's): both sides copy with LDGSTS; the longer is the clamped.
    for then, other in zip(sides[::2], sides[1::2]):
        if all(any("LDGSTS" in t for t in ins[x[0]:x[1]])
               for x in (then, other)):
            skip.append(max(then, other, key=lambda x: x[1] - x[0]))
    # One-sided branches over FMULs only: `@P BRA j` skipping [i + 1, j).
    skippable = []
    for i in range(a, b):
        j = target(ins[i]) if re.match(r"@!?P\d BRA", ins[i]) else None
        if j is not None and j > i + 1 and all(
                t.startswith("FMUL") for t in ins[i + 1:j]):
            skippable.append((i + 1, j))
    counts, skipped = collections.Counter(), 0
    for i in range(a, b + 1):
        if any(s <= i < e for s, e in skip):
            continue
        weight = trips if any(s <= i <= e for s, e in inner) else 1
        if dump is not None:
            dump.append(ins[i])
        op = re.sub(r"^@!?U?P\w+\s+", "", ins[i]).split()[0].split(".")[0]
        counts[op] += weight
        if any(s <= i < e for s, e in skippable):
            skipped += weight
    return counts, skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("--kinds", default="none,t5")
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--variants",
                        default=";mma-registers=1;"
                        "mma-registers=1 mma-tile-k=64;"
                        "mma-registers=1 mma-block-rows=128 mma-threads=128")
    parser.add_argument("--trips", type=int, default=1,
                        help="iterations counted for each inner loop")
    parser.add_argument("--top", type=int, default=8,
                        help="how many of the commonest opcodes to list")
    parser.add_argument("--dump", metavar="FILE",
                        help="write the counted instructions of each kernel "
                        "to FILE")
    args = parser.parse_args()
    compile_tool, ptxas, nvdisasm = (tool("rpe-compile"), tool("ptxas"),
                                     tool("nvdisasm"))
    print(f"| kind | options | instructions | HMMA | per HMMA "
          f"| per HMMA, FMUL branches skipped | registers | spill bytes "
          f"| commonest |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.kinds.split(","):
            source = os.path.join(tmp, kind + ".mlir")
            with open(source, "w") as f:
                f.write(MODULES[kind].format(d=args.head_dim))
            for options in args.variants.split(";"):
                ptx = os.path.join(tmp, "k.ptx")
                cubin = os.path.join(tmp, "k.cubin")
                subprocess.run([compile_tool, source, "--target=nvptx",
                                f"--chip={args.chip}", "--emit=ptx",
                                f"--gpu-kernel-options={options}", "-o", ptx],
                               check=True)
                info = subprocess.run(
                    [ptxas, f"-arch={args.chip}", "-v", ptx, "-o", cubin],
                    check=True, capture_output=True, text=True).stderr
                sass = subprocess.run([nvdisasm, "-c", cubin], check=True,
                                      capture_output=True, text=True).stdout
                kernels = re.findall(r"^\.text\.(\S+):", sass, re.M)
                for kernel in kernels:
                    ins, labels = parse(sass, kernel)
                    counted = [] if args.dump else None
                    tile = full_tile(ins, labels, args.trips, counted)
                    if tile is None:
                        continue
                    counts, skipped = tile
                    if args.dump:
                        with open(args.dump, "a") as f:
                            f.write(f"// {kind} {options} {kernel}\n")
                            f.write("\n".join(counted) + "\n")
                    block = info.split(f"'{kernel}'")[1]
                    regs = re.search(r"Used (\d+) registers", block).group(1)
                    spill = re.search(r"(\d+) bytes spill stores", block)
                    total, hmma = sum(counts.values()), counts["HMMA"]
                    common = ", ".join(f"{op} {n}" for op, n in
                                       counts.most_common(args.top))
                    lazy = (f"{(total - skipped) / hmma:.1f}" if skipped
                            else "-")
                    print(f"| {kind} | `{options or 'default'}` | {total} | "
                          f"{hmma} | {total / hmma:.1f} | {lazy} | {regs} | "
                          f"{spill.group(1)} | {common} |")


if __name__ == "__main__":
    main()
