"""No stack allocation inside a loop that does not give it back.

`scf.for` is marked an allocation scope, but its lowering to branches frees
no stack per iteration: a `memref.alloca` left inside one grows the stack
by its size at every iteration. That crashed DeBERTa with 512 (batch, head)
pairs on one thread (66 KiB of kernel scratch per head overflowed the 8 MiB
main stack) until `rpe-hoist-forall-allocas` moved the scratch in front of
the loops. OpenMP loop bodies are fine: the SCF-to-OpenMP conversion wraps
each iteration in a stack save/restore.

Each module is compiled to LLVM IR as `rpe.compile` compiles it, optimized
with LLVM's `opt -O2`, and every `alloca` in a loop (LLVM's loop info) must
have a `llvm.stacksave` and `llvm.stackrestore` in its innermost loop.
Checked against e641fd8's library: its DeBERTa modules on one thread fail
here (the kernel's scratch buffers in the heads loop)."""

import glob
import os
import re
import shutil
import subprocess

import pytest

from rpe import _capi
from rpe import ir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OPT = shutil.which("opt", path="/usr/lib/llvm-22/bin") or shutil.which(
    "opt-22")
# RPE_STACK_SCOPES_MODULES=0 leaves out the modules and keeps the checker's
# self-test: the sanitized stage, where the LLVM IR is the same and lit
# compiles the modules under ASan already (this file took 165 s of its
# workers' time there).
CHECK_MODULES = os.environ.get("RPE_STACK_SCOPES_MODULES", "1") != "0"
# The integration modules.
INTEGRATION = sorted(glob.glob(os.path.join(REPO, "test", "Integration", "CPU",
                                            "*.mlir"))) if CHECK_MODULES else []
# One thread, and two: the heads split evenly (a parallel loop over them)
# or, with three, unevenly (one head after another, threads inside).
THREADS = [0, 2, 3]


def _opt(args, text):
    assert OPT, "LLVM's opt not found (llvm-22; scripts/install-deps.sh)"
    proc = subprocess.run([OPT] + args, input=text, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


def _blocks(llvm_ir):
    """{function: {block: [instruction lines]}} of textual LLVM IR."""
    functions, body = {}, None
    for line in llvm_ir.splitlines():
        if line.startswith("define "):
            name = re.search(r'@"?([^"(]+)"?\(', line).group(1)
            body = functions.setdefault(name, {})
            block = body.setdefault("<entry>", [])
        elif line.startswith("}"):
            body = None
        elif body is not None:
            label = re.match(r"^([\w.$-]+):", line)
            if label:
                block = body.setdefault(label.group(1), [])
            else:
                block.append(line)
    return functions


def _loops(llvm_ir):
    """{function: [(depth, {blocks})]} from opt's loop info."""
    info = _opt(["-passes=print<loops>", "-disable-output", "-"],
                llvm_ir).stderr
    loops, current = {}, None
    for line in info.splitlines():
        m = re.match(r"Loop info for function '(.+)':", line)
        if m:
            current = loops.setdefault(m.group(1), [])
            continue
        m = re.search(r"Loop at depth (\d+) containing: (.*)", line)
        if m and current is not None:
            blocks = {b.split("<")[0].strip().lstrip("%")
                      for b in m.group(2).split(",")}
            current.append((int(m.group(1)), blocks))
    return loops


def unscoped_loop_allocas(llvm_ir):
    """(function, block, alloca) for each alloca whose innermost loop neither
    saves nor restores the stack pointer."""
    optimized = _opt(["-O2", "-S", "-"], llvm_ir).stdout
    loops = _loops(optimized)
    found = []
    for fn, blocks in _blocks(optimized).items():
        for name, lines in blocks.items():
            for line in lines:
                if " = alloca " not in line:
                    continue
                around = [lp for lp in loops.get(fn, []) if name in lp[1]]
                if not around:
                    continue
                _, inner = max(around, key=lambda lp: lp[0])
                text = "\n".join("\n".join(blocks.get(b, ())) for b in inner)
                if "llvm.stacksave" in text and "llvm.stackrestore" in text:
                    continue
                found.append((fn, name, line.strip()))
    return found


def _check(text, tmp_path, num_threads):
    out = str(tmp_path / "module.ll")
    ok, diags = _capi.compiler().compile(text, "module.mlir", out,
                                         emit="llvm", cpu="native",
                                         num_threads=num_threads)
    assert ok, diags
    with open(out) as f:
        found = unscoped_loop_allocas(f.read())
    assert not found, "stack allocated in a loop that never frees it:\n" + \
        "\n".join("  @%s, %s: %s" % f for f in found[:10])


def test_checker_finds_an_alloca_in_a_loop():
    """The checker itself: an alloca in a counted loop is reported, and the
    same alloca between a save and a restore of the stack is not."""
    template = """
define void @f(i64 %n, ptr %out) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %sp = call ptr @llvm.stacksave.p0()
  %buf = alloca [64 x float], align 64
  store volatile float 1.0, ptr %buf
  %v = load volatile float, ptr %buf
  store float %v, ptr %out
  call void @llvm.stackrestore.p0(ptr %sp)
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
declare ptr @llvm.stacksave.p0()
declare void @llvm.stackrestore.p0(ptr)
"""
    assert unscoped_loop_allocas(template) == []
    unscoped = "\n".join(line for line in template.splitlines()
                         if "stacksave" not in line
                         and "stackrestore" not in line
                         or line.startswith("declare"))
    found = unscoped_loop_allocas(unscoped)
    assert [(fn, block) for fn, block, _ in found] == [("f", "loop")]


if INTEGRATION:
    @pytest.mark.parametrize("num_threads", THREADS[:2])
    @pytest.mark.parametrize("path", INTEGRATION,
                             ids=[os.path.basename(p) for p in INTEGRATION])
    def test_integration_modules(path, num_threads, tmp_path):
        with open(path) as f:
            _check(f.read(), tmp_path, num_threads)


# Many (batch, head) pairs, dynamic batch and lengths: the heads loop of
# rpe-split-attention-heads (per-head tables), and the attention kernel's
# loops over heads and query tiles.
MODULES = {
    "deberta": lambda: ir.deberta_attention(
        ir.Log(256, 512), batch=None, heads=64, lq=None, lk=None, head_dim=8,
        name="f"),
    "deberta_causal": lambda: ir.deberta_attention(
        ir.Log(64, 128), batch=None, heads=3, lq=None, lk=None, head_dim=16,
        causal=True, key_lengths=True, name="f"),
    "shaw": lambda: ir.shaw_attention(
        ir.Clip(16), batch=None, heads=12, lq=None, lk=None, head_dim=16,
        name="f"),
    "t5": lambda: ir.t5_attention(
        batch=None, heads=16, lq=None, lk=None, head_dim=64, causal=True,
        key_lengths=True, q_offset=True, name="f"),
    "alibi_gqa": lambda: ir.alibi_attention(
        batch=None, heads=8, kv_heads=2, lq=None, lk=None, head_dim=32,
        causal=True, name="f"),
    "swin": lambda: ir.swin_window_attention(
        7, 7, batch=None, heads=6, head_dim=32, name="f"),
}


@pytest.mark.skipif(not CHECK_MODULES, reason="RPE_STACK_SCOPES_MODULES=0")
@pytest.mark.parametrize("num_threads", THREADS)
@pytest.mark.parametrize("module", sorted(MODULES))
def test_attention_modules(module, num_threads, tmp_path):
    _check(MODULES[module](), tmp_path, num_threads)
