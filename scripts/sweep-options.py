#!/usr/bin/env python3
"""Random option combinations of rpe's passes, pipelines and rpe-compile
on every `// -----` chunk of every .mlir file under test/.

Each run sets 1 to 4 options of one pass (or of rpe-compile), most at a
plausible value and some at an extreme one (0, -1, 10^6, 2^62, unknown
names). A run is a finding when the tool is killed by a signal, exits
non-zero without an error message, prints an LLVM fatal error, an
assertion, a stack dump or a sanitizer report, or runs past --timeout.
Exiting 0, or non-zero with a diagnostic, is fine: the point is that bad
options are diagnosed, never a crash or a hang (Decisions.md, "Options in
combination").

  scripts/sweep-options.py --build build --mode passes --draws 8 --seed 1
  modes: passes (every rpe pass but the pipelines; the pass the file's RUN
  lines name 7 times in 10), pipelines (rpe-cpu-pipeline,
  rpe-nvptx-pipeline), compile (rpe-compile, on chunks with a function)

With --retype P, a run changes one element type of its chunk into another
(f32 to i0, f16 to f128, ...) with probability P: the same crash hunt
over types the passes and LLVM may not handle (most such inputs fail to
verify, which is fine).

A crash inside LLVM itself that is reported upstream and that rpe cannot
avoid (KNOWN_UPSTREAM) is printed as KNOWN and counted apart.

Prints each finding, then "N runs, N succeeded, N findings"; exits 1 if
there was a finding. Deterministic for a given seed, build and test/ tree.
"""

import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXTREME_INTS = [0, -1, -7, 1000000, 2**62, 2**63 - 1]
PLAUSIBLE_INTS = [1, 2, 3, 4, 8, 16, 17, 32, 48, 64, 128]
STRINGS = {  # option name: (plausible, extreme)
    "target-cpu": (["native", "generic", "znver4", "x86-64-v3",
                    "skylake-avx512", "x86-64-v2"], ["bogus", ""]),
    "chip": (["sm_80", "sm_90", "sm_75", "sm_100", "sm_120", "sm_90a"],
             ["sm_70", "sm_50", "sm_1000", "bogus", ""]),
    "features": (["", "+ptx84", "+ptx88"], ["+ptx60", "bogus", "+ptx8000"]),
    "format": (["isa", "bin", "fatbin"], ["bogus", ""]),
    "cuda-path": ([""], ["/nonexistent"]),
}
COMPILE_OPTIONS = {  # rpe-compile: (plausible, extreme)
    "-O": (["0", "1", "3"], ["4", "-1"]),
    "--chip": (["sm_80", "sm_90", "sm_90a", "sm_100", "sm_120"],
               ["sm_70", "sm_60", "bogus"]),
    "--emit": (["mlir", "llvm", "asm", "obj", "shared", "ptx"],
               ["cubin", "fatbin", "bogus"]),
    "--gpu-kernel-options": (
        ["mma-threads=256", "mma-threads=1", "mma-registers=1",
         "block-rows=1", "tile-k=1", "mma-tile-k=16 mma-block-rows=16",
         "thread-tile-rows=16 thread-tile-columns=16", "block-size=1",
         "mma-lazy-rescale=1 mma-registers=1"],
        ["tile-k=100000", "bogus=1", "chip=sm_90", "{", "tile-k=-3"]),
    "--mcpu": (["generic", "native", "znver4", "x86-64-v2", "x86-64-v3",
                "skylake-avx512"], ["bogus", "sapphirerapids"]),
    "--num-threads": (["0", "1", "2", "3"], ["1024", "1025", "-1"]),
    "--reference": (["true", "false"], []),
    "--target": (["cpu", "nvptx", "nvptx-emulated"], ["bogus"]),
    "--tensor-cores": (["true", "false"], []),
    "--tile-k": (["1", "3", "16", "64"], ["100000", "0", "-1", str(2**62)]),
    "--tile-q": (["1", "3", "16", "64"], ["100000", "0", "-1", str(2**62)]),
    "--verify-each": (["true", "false"], []),
}
# Options that bound how much work a pass does (rpe-fuse-attention's
# evaluation of index code at each position pair): 2^62 asks for all of it,
# minutes on a long attention by design, so their extremes stop at 10^6.
WORK_BUDGETS = {"bucket-max-pairs", "bucket-max-diagonals", "fold-ops"}
WORK_BUDGET_EXTREMES = [0, -1, -7, 1000000]
BAD_OUTPUT = ["LLVM ERROR", "Assertion", "runtime error:", "AddressSanitizer",
              "LeakSanitizer", "Stack dump", "UNREACHABLE", "PLEASE submit"]
DIAGNOSED = ["error", "invalid", "Unknown command line", "may only occur"]
# Crashes inside LLVM 22 itself that rpe cannot avoid: the text of the
# stack dump, and the upstream report. Counted apart, not as findings.
KNOWN_UPSTREAM = [
    ("MLIR Parser: custom op parser 'linalg.batch_matmul'",
     "llvm/llvm-project#179677: linalg.batch_matmul's parser crashes on "
     "element types its body cannot use (index), fixed after LLVM 22"),
    ("IEEEFloat::convertFromAPInt",
     "llvm/llvm-project#180463: folding sitofp / uitofp of an i0 constant "
     "crashes in APFloat (the pipelines reject i0 before any folding)"),
]
# --retype: the element types of the inputs, and what they may become.
RETYPE_FROM = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64"]
RETYPE_TO = ["f16", "bf16", "f32", "f64", "f80", "f128", "tf32", "f8E4M3FN",
             "f8E5M2", "f4E2M1FN", "i0", "i1", "i2", "i8", "i17", "i32", "i64",
             "i65", "i128", "index", "complex<f32>", "complex<f64>"]


def type_pattern(name):
    """`name` as an element type: alone, or after a shape's `x`."""
    # Not inside a name (@attn_f32, %f32, #map_f16).
    return re.compile(r"(?:(?<=[0-9?]x)|(?<![A-Za-z0-9_$.%@#^!]))"
                      + re.escape(name) + r"(?![A-Za-z0-9_])")


def retype(rng, text):
    """`text` with one of its element types replaced by another, and a
    label; None if it has none of RETYPE_FROM."""
    present = [t for t in RETYPE_FROM if type_pattern(t).search(text)]
    if not present:
        return None
    old = rng.choice(present)
    new = rng.choice([t for t in RETYPE_TO if t != old])
    return type_pattern(old).sub(new, text), "%s as %s" % (old, new)


def pass_options(helptext, name):
    """(option, kind) of pass `name` from `rpe-opt --help`; kind is
    None for a flag."""
    block = helptext.split("--" + name + " ", 1)[1].split("\n      --")[0]
    return [(o, k or None) for o, k in re.findall(
        r"^        --([a-z0-9-]+)(?:=<(\w+)>)?", block, re.M)]


def draw_value(rng, name, kind):
    plausible = rng.random() < 0.8
    if name in WORK_BUDGETS and not plausible:
        return rng.choice(WORK_BUDGET_EXTREMES)
    if kind is None:
        return rng.choice(["true", "false", "1", "0"])
    if kind == "string":
        good, bad = STRINGS.get(name, ([""], ["x"]))
        return rng.choice(good if plausible else bad)
    if kind == "uint":
        return rng.choice([0, 1, 2, 3, 4, 8] if plausible
                          else [16, 1024, 1025, 2**32, 2**40])
    return rng.choice(PLAUSIBLE_INTS if plausible else EXTREME_INTS)


def chunks(tests_dir, need_function):
    found = []
    for path in sorted(glob.glob(os.path.join(tests_dir, "**", "*.mlir"),
                                 recursive=True)):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for i, part in enumerate(text.split("// -----")):
            if need_function and ("func.func" not in part
                                  or "expected-error" in part):
                continue
            if "func.func" in part or "rpe." in part:
                found.append((os.path.relpath(path, ROOT), i, part, text))
    return found


def plan(args, tmp):
    """The runs: (input, argv, options as shown) in a fixed order."""
    rng = random.Random(args.seed)
    opt = os.path.join(args.build, "bin", "rpe-opt")
    compile_tool = os.path.join(args.build, "bin", "rpe-compile")
    helptext = subprocess.run([opt, "--help"], capture_output=True,
                              text=True, check=True).stdout
    names = re.findall(r"^      --((?:rpe-|convert-rpe)[a-z-]+) ", helptext,
                       re.M)
    if args.mode == "pipelines":
        names = [n for n in names if n.endswith("-pipeline")]
    else:
        names = [n for n in names if not n.endswith("-pipeline")]
    options = {n: pass_options(helptext, n) for n in names}
    options = {n: o for n, o in options.items() if o}
    runs = []
    for n, (path, index, text, whole) in enumerate(
            chunks(os.path.join(ROOT, "test"), args.mode == "compile")):
        with open(os.path.join(tmp, "chunk%d.mlir" % n), "w",
                  encoding="utf-8") as f:
            f.write(text)
        for draw in range(args.draws):
            label = "%s (chunk %d)" % (path, index)
            retyped = retype(rng, text) if rng.random() < args.retype else None
            if retyped:
                chunk = os.path.join(tmp, "chunk%d.%d.mlir" % (n, draw))
                with open(chunk, "w", encoding="utf-8") as f:
                    f.write(retyped[0])
                label += ", " + retyped[1]
            else:
                chunk = os.path.join(tmp, "chunk%d.mlir" % n)
            if args.mode == "compile":
                argv = [compile_tool, chunk, "-o", chunk + ".out"]
                for key in rng.sample(sorted(COMPILE_OPTIONS),
                                      rng.randint(1, 4)):
                    good, bad = COMPILE_OPTIONS[key]
                    value = rng.choice(good if not bad or rng.random() < 0.8
                                       else bad)
                    argv.append("-O" + value if key == "-O" and
                                not value.startswith("-")
                                else "%s=%s" % (key, value))
                if not any(a.startswith("--emit") for a in argv):
                    argv.append("--emit=obj")
                shown = " ".join(argv[4:])
            else:
                named = [p for p in options if p in whole]
                name = rng.choice(named if named and rng.random() < 0.7
                                  else sorted(options))
                chosen = rng.sample(options[name],
                                    min(rng.randint(1, 4), len(options[name])))
                values = " ".join("%s=%s" % (o, draw_value(rng, o, k))
                                  for o, k in chosen)
                argv = [opt, "--%s=%s" % (name, values), chunk,
                        "-o", os.devnull]
                shown = "rpe-opt '%s'" % argv[1]
            runs.append((label, argv, shown))
    return runs


def run_one(run, timeout):
    label, argv, shown = run
    try:
        result = subprocess.run(argv, capture_output=True, text=True,
                                errors="replace", timeout=timeout)
        code, err = result.returncode, result.stderr
    except subprocess.TimeoutExpired:
        return label, shown, None, "timed out after %d s" % timeout
    bad = code < 0 or code >= 128 or any(s in err for s in BAD_OUTPUT)
    if code != 0 and not any(s in err for s in DIAGNOSED):
        bad = True
    for text, report in KNOWN_UPSTREAM:
        if bad and text in err:
            return label, shown, code, "known upstream crash: " + report
    return label, shown, code, (err[-2000:] if bad else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--mode", choices=["passes", "pipelines", "compile"],
                        default="passes")
    parser.add_argument("--draws", type=int, default=1,
                        help="runs per chunk (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds per run (default 120)")
    parser.add_argument("--retype", type=float, default=0.0,
                        help="probability that a run changes an element "
                        "type of its input (default 0)")
    parser.add_argument("--json", help="write the findings here")
    args = parser.parse_args()
    if args.draws < 1 or args.jobs < 1 or args.timeout < 1:
        parser.error("--draws, --jobs and --timeout must be positive")
    if not 0.0 <= args.retype <= 1.0:
        parser.error("--retype must be in [0, 1]")
    with tempfile.TemporaryDirectory(prefix="rpe-sweep-") as tmp:
        runs = plan(args, tmp)
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda r: run_one(r, args.timeout), runs))
    findings = []
    known = 0
    for label, shown, code, err in results:
        if err is not None and err.startswith("known upstream crash: "):
            known += 1
            print("KNOWN %s: %s: %s" % (label, shown, err))
        elif err is not None:
            findings.append({"input": label, "options": shown, "exit": code,
                             "stderr": err})
            print("FINDING %s: %s: exit %s\n%s" % (label, shown, code,
                                                   err.strip()))
    succeeded = sum(1 for r in results if r[2] == 0)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(findings, f, indent=1)
    if known:
        print("%d known upstream crashes (not findings)" % known)
    print("%d runs, %d succeeded, %d findings" % (len(results), succeeded,
                                                 len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
