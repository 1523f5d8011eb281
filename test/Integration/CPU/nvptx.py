#!/usr/bin/env python3
"""Compiles every module of this directory for NVIDIA GPUs and assembles it:
`rpe-opt -rpe-nvptx-pipeline` must accept it, `rpe-compile --target=nvptx
--emit=obj` must give an object (host code, device code embedded), and
`--emit=ptx` PTX with at least one kernel that `ptxas -v` assembles for
each chip without spilling. Prints one line per
failure and `FAIL`, or `PASS: N modules, ...`; exits 1 on any failure.

Usage: nvptx.py RPE_OPT RPE_COMPILE PTXAS TMPDIR [CHIP ...] (default chips:
sm_80 sm_90).
"""
import glob
import os
import re
import subprocess
import sys

SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def check(path, tools, tmp, chips):
    """The problems of one module, as strings (none: it passed)."""
    rpe_opt, rpe_compile, ptxas = tools
    name = os.path.basename(path)
    rc, out = run([rpe_opt, path, "-rpe-nvptx-pipeline", "-o", os.devnull])
    if rc != 0:
        return ["%s: rpe-opt -rpe-nvptx-pipeline exited %d: %s"
                % (name, rc, out.strip()[:500])]
    problems = []
    # The host side too: an object with the device code embedded.
    obj = os.path.join(tmp, name + ".o")
    rc, out = run([rpe_compile, path, "--target=nvptx", "--chip=" + chips[-1],
                   "--emit=obj", "-o", obj])
    if rc != 0:
        problems.append("%s: rpe-compile --emit=obj exited %d: %s"
                        % (name, rc, out.strip()[:500]))
    for chip in chips:
        ptx = os.path.join(tmp, name + "." + chip + ".ptx")
        rc, out = run([rpe_compile, path, "--target=nvptx",
                       "--chip=" + chip, "--emit=ptx", "-o", ptx])
        if rc != 0:
            problems.append("%s: rpe-compile --chip=%s exited %d: %s"
                            % (name, chip, rc, out.strip()[:500]))
            continue
        with open(ptx) as f:
            if ".entry" not in f.read():
                problems.append("%s: no kernel in the %s PTX" % (name, chip))
        rc, out = run([ptxas, "-arch=" + chip, "-v", ptx, "-o",
                       ptx + ".cubin"])
        spills = SPILLS.findall(out)
        if rc != 0 or not spills:
            problems.append("%s: ptxas -arch=%s exited %d: %s"
                            % (name, chip, rc, out.strip()[:500]))
        elif any(int(a) or int(b) for a, b in spills):
            problems.append("%s: ptxas -arch=%s: spills: %s"
                            % (name, chip, spills))
    return problems


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    tools, tmp, chips = argv[1:4], argv[4], argv[5:] or ["sm_80", "sm_90"]
    os.makedirs(tmp, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    paths = sorted(glob.glob(os.path.join(here, "*.mlir")))
    if not paths:
        sys.exit("nvptx.py: no module in " + here)
    problems = [p for path in paths for p in check(path, tools, tmp, chips)]
    for p in problems:
        print(p)
    if problems:
        print("FAIL: %d problems" % len(problems))
        return 1
    print("PASS: %d modules, %s, no spills" % (len(paths), " and ".join(chips)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
