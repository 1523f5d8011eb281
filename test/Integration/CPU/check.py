#!/usr/bin/env python3
"""Compares printMemrefF32 output (stdin) with a test file's expectations.

Usage:  mlir-runner ... | python3 check.py TEST_FILE

TEST_FILE holds, in print order, one ``// EXPECT: v0 v1 ...`` line per
printed result (flat, row-major), each optionally preceded by
``// EXPECT-SHAPE: 2x3x4``, and optionally ``// TOLERANCE: rtol=R atol=A``
(default rtol=1e-5, atol=1e-6).

A value passes when  |got - want| <= rtol*|want| + atol + q(got),  where
q(got) = 0.5e-5 * 10^floor(log10|got|) is half a unit in the 6th significant
digit: printMemrefF32 prints only 6 significant digits, so that much of the
difference is the printing's, not the kernel's.  An expected exact 0 (a
fully masked attention row, ALiBi's diagonal) must be printed as exactly 0
(or -0).  NaN never passes (nor does inf unless expected).

Prints ``PASS <n> values, max error ...`` and exits 0, or ``FAIL ...`` lines
(result, index, got, want) and exits 1.  Pure Python, no NumPy.
"""

import math
import re
import sys

HEADER = re.compile(
    r"Unranked Memref base@ = (?:0x)?[0-9a-fA-F]+ rank = (\d+) offset = (-?\d+) "
    r"sizes = \[([^\]]*)\] strides = \[([^\]]*)\] data =")
TOKEN = re.compile(r"[^\s\[\],]+")
MAX_REPORT = 20


def parse_ints(s):
    s = s.strip()
    return [int(x) for x in s.split(",")] if s else []


def parse_blocks(text):
    """Returns a list of (sizes, values) for every printMemref block, plus a
    list of lines that belong to no block."""
    blocks, stray = [], []
    matches = list(HEADER.finditer(text))
    if matches:
        stray.extend(l for l in text[:matches[0].start()].splitlines() if l.strip())
    for n, m in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        body = text[m.end():end]
        sizes = parse_ints(m.group(3))
        if int(m.group(1)) != len(sizes):
            raise ValueError("block %d: rank %s but sizes %s" % (n, m.group(1), sizes))
        count = 1
        for s in sizes:
            count *= s
        # The data is the bracketed region; anything after its closing
        # bracket on later lines is stray output.
        depth, pos, started = 0, 0, False
        for pos, ch in enumerate(body):
            if ch == "[":
                depth += 1
                started = True
            elif ch == "]":
                depth -= 1
                if started and depth == 0:
                    break
        else:
            if started:
                raise ValueError("block %d: unbalanced brackets" % n)
        data, rest = body[:pos + 1], body[pos + 1:]
        stray.extend(l for l in rest.splitlines() if l.strip())
        values = []
        for tok in TOKEN.findall(data):
            try:
                values.append(float(tok))
            except ValueError:
                raise ValueError("block %d: cannot parse value %r" % (n, tok))
        blocks.append((sizes, count, values))
    if not matches:
        stray.extend(l for l in text.splitlines() if l.strip())
    return blocks, stray


def parse_expectations(path):
    rtol, atol = 1e-5, 1e-6
    expects, shape = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"//\s*TOLERANCE:\s*(.*)$", line)
            if m:
                for key, val in re.findall(r"(rtol|atol)\s*=\s*([^\s,]+)", m.group(1)):
                    if key == "rtol":
                        rtol = float(val)
                    else:
                        atol = float(val)
                continue
            m = re.match(r"//\s*EXPECT-SHAPE:\s*(.*)$", line)
            if m:
                s = m.group(1).strip()
                shape = [int(x) for x in s.split("x")] if s else []
                continue
            m = re.match(r"//\s*EXPECT:\s*(.*)$", line)
            if m:
                vals = [float(x) for x in TOKEN.findall(m.group(1))]
                expects.append((shape, vals))
                shape = None
    return rtol, atol, expects


def quantum(got):
    if got == 0.0 or not math.isfinite(got):
        return 0.0
    return 0.5e-5 * 10.0 ** math.floor(math.log10(abs(got)))


def main(argv):
    if len(argv) != 2:
        print("usage: check.py TEST_FILE < runner-output")
        return 2
    rtol, atol, expects = parse_expectations(argv[1])
    text = sys.stdin.read()
    try:
        blocks, stray = parse_blocks(text)
    except ValueError as e:
        print("FAIL: malformed runner output: %s" % e)
        return 1
    failures = []
    if not expects:
        failures.append("no EXPECT lines in %s" % argv[1])
    if stray:
        failures.append("unexpected output line(s): %s"
                        % "; ".join(repr(l) for l in stray[:5]))
    if len(blocks) != len(expects):
        failures.append("printed %d result(s), expected %d"
                        % (len(blocks), len(expects)))
    total, max_err, max_rel, nbad = 0, 0.0, 0.0, 0
    for r, ((sizes, count, got), (shape, want)) in enumerate(zip(blocks, expects)):
        if shape is not None and sizes != shape:
            failures.append("result %d: shape %s, expected %s"
                            % (r, "x".join(map(str, sizes)), "x".join(map(str, shape))))
            continue
        if len(got) != count:
            failures.append("result %d: %d values printed for sizes %s"
                            % (r, len(got), sizes))
            continue
        if len(got) != len(want):
            failures.append("result %d: %d values, expected %d"
                            % (r, len(got), len(want)))
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            total += 1
            if math.isnan(g):
                ok, err = False, float("nan")
            elif math.isinf(g) or math.isinf(w):
                ok, err = g == w, (0.0 if g == w else float("inf"))
            elif w == 0.0:
                err = abs(g)
                ok = g == 0.0
                max_err = max(max_err, err)
            else:
                err = abs(g - w)
                ok = err <= rtol * abs(w) + atol + quantum(g)
                max_err = max(max_err, err)
                if w != 0.0:
                    max_rel = max(max_rel, err / abs(w))
            if not ok:
                nbad += 1
                if nbad <= MAX_REPORT:
                    idx = index_of(i, sizes)
                    allowed = 0.0 if w == 0.0 else rtol * abs(w) + atol + quantum(g)
                    failures.append("result %d, index %d %s: got %r, want %r "
                                    "(error %.3g, allowed %.3g)"
                                    % (r, i, idx, g, w, err, allowed))
    if nbad > MAX_REPORT:
        failures.append("... %d mismatching values in all" % nbad)
    if failures:
        print("FAIL %s (rtol=%g atol=%g)" % (argv[1], rtol, atol))
        for f in failures:
            print("FAIL: " + f)
        return 1
    print("PASS %d values, max error %.3g (max relative %.3g), rtol=%g atol=%g"
          % (total, max_err, max_rel, rtol, atol))
    return 0


def index_of(flat, sizes):
    idx = []
    for s in reversed(sizes):
        idx.append(flat % s if s else 0)
        flat = flat // s if s else 0
    return "[%s]" % ", ".join(map(str, reversed(idx)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
