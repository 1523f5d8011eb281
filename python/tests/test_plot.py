"""rpe.plot and ``python -m rpe plot``: PNGs are written and well formed,
bad arguments give a one-line error and exit status 2 (no traceback)."""

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from rpe import plot  # noqa: E402
from rpe import reference as ref  # noqa: E402

try:
    from rpe import compile as rpe_compile  # noqa: E402,F401
except ImportError:  # pragma: no cover
    rpe_compile = None
needs_compile = pytest.mark.skipif(
    rpe_compile is None, reason="rpe.compile is not importable yet")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from the IHDR chunk; asserts a well-formed PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == PNG_MAGIC, "not a PNG: %r" % data[:8]
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    assert data.endswith(b"IEND\xaeB`\x82"), "truncated PNG"
    return width, height


def check_png(path, min_w=300, min_h=150, max_side=4000, min_bytes=5000):
    assert os.path.exists(path), path
    w, h = png_size(path)
    assert min_w <= w <= max_side and min_h <= h <= max_side, (w, h)
    assert os.path.getsize(path) >= min_bytes, os.path.getsize(path)
    return w, h


def run_cli(*args, cwd=None, **extra_env):
    env = dict(os.environ)
    env.update(extra_env)
    env["PYTHONPATH"] = os.path.dirname(HERE) + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-m", "rpe"] + list(args), cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)


# ---------------------------------------------------------------------------
# Library
# ---------------------------------------------------------------------------

def test_bias_heatmap(tmp_path):
    s = ref.T5(32, 128, True)
    table = plot.make_table(s, 4, seed=0)
    bias = plot.compute_bias(s, table, 64, 64)
    np.testing.assert_array_equal(bias, ref.relative_bias(table, 64, 64, s))
    w, h = check_png(plot.save_bias_heatmap(bias, str(tmp_path / "b.png")))
    assert w > h                                  # four panels side by side
    # 1 x H x Lq x Lk (a PyTorch-style bias) is accepted too.
    check_png(plot.save_bias_heatmap(bias[None], tmp_path / "b4.png", heads=[1, 3]))


def test_attention_heatmap(tmp_path):
    s = ref.Clip(5)
    table = plot.make_table(s, 4, seed=1)
    bias = plot.compute_bias(s, table, 10, 10)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, 10, 8)).astype(np.float32)
    k = rng.standard_normal((2, 4, 10, 8)).astype(np.float32)
    p = plot.compute_attention_weights(q, k, bias=bias, causal=True)
    assert p.shape == (2, 4, 10, 10)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-12)
    assert np.all(np.triu(p[0, 0], 1) == 0)
    check_png(plot.save_attention_heatmap(p, str(tmp_path / "a.png"), batch=1))


@pytest.mark.parametrize("scheme", [ref.Clip(8), ref.T5(32, 128, False), ref.Log(32, 64), None])
def test_curve(tmp_path, scheme):
    table = None if scheme is None else plot.make_table(scheme, 3, init="normal")
    check_png(plot.save_curve(scheme, table, str(tmp_path / "c.png"), alibi_heads=3))


def test_window2d_bias(tmp_path):
    s = ref.Window2D(3, 5)
    table = plot.make_table(s, 2)
    bias = plot.compute_bias(s, table, 15, 15)
    check_png(plot.save_bias_heatmap(bias, str(tmp_path / "w.png")), min_w=200)
    with pytest.raises(ValueError):
        plot.curve_figure(s, table)


def test_decay_table_peaks_at_zero():
    """The 'decay' table reads as the seed's §5.3 describes a trained one."""
    for s in (ref.Clip(6), ref.T5(32, 128, True), ref.Log(16, 40)):
        table = plot.make_table(s, 4, seed=3, init="decay", std=1.0)
        d = np.array([0, 1, 2, 4, 8, 16, 32])
        b = table[plot._bucket_of_distance(s, -d)][:, 0]   # head 0, keys before
        assert b[0] == b.max()
        assert b[-1] < b[0] - 1.0


def test_bad_inputs():
    with pytest.raises(ValueError):
        plot.bias_figure(np.zeros((4, 4)))
    with pytest.raises(ValueError):
        plot.attention_figure(np.zeros((1, 2, 3, 3)), batch=1)
    with pytest.raises(ValueError):
        plot.bias_figure(np.zeros((2, 3, 3)), heads=[2])
    with pytest.raises(ValueError):
        plot.compute_bias(ref.Clip(2), np.zeros((4, 2), np.float32), 3, 3)
    with pytest.raises(ValueError):
        plot.make_scheme("t5", num_buckets=32, max_distance=8)   # e = 8


@needs_compile
def test_compiled_matches_reference():
    for s, lq, lk, off in ((ref.T5(32, 128, True), 40, 40, 0), (ref.Clip(3), 7, 12, 5),
                           (ref.Log(16, 40), 30, 30, 0), (ref.Window2D(3, 4), 12, 12, 0)):
        table = plot.make_table(s, 3, seed=2)
        np.testing.assert_array_equal(
            plot.compute_bias(s, table, lq, lk, q_offset=off, compiled=True),
            plot.compute_bias(s, table, lq, lk, q_offset=off))
    np.testing.assert_allclose(plot.compute_bias(None, None, 9, 9, heads=6, compiled=True),
                               ref.alibi(6, 9, 9, symmetric=True), rtol=1e-6, atol=1e-6)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 9, 4)).astype(np.float32)
    k = rng.standard_normal((1, 2, 9, 4)).astype(np.float32)
    bias = plot.compute_bias(ref.Clip(3), plot.make_table(ref.Clip(3), 2), 9, 9)
    np.testing.assert_allclose(
        plot.compute_attention_weights(q, k, bias=bias, causal=True, compiled=True),
        plot.compute_attention_weights(q, k, bias=bias, causal=True), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["plot", "bias", "--scheme", "t5", "--num-buckets", "32", "--max-distance", "128",
     "--length", "64", "--heads", "4", "--seed", "0"],
    ["plot", "bias", "--scheme", "clip", "--max-distance", "4", "--length", "9",
     "--key-length", "14", "--q-offset", "3", "--heads", "2", "--init", "normal"],
    ["plot", "bias", "--scheme", "window2d", "--window", "4x3", "--heads", "2"],
    ["plot", "bias", "--scheme", "alibi", "--heads", "6", "--length", "20", "--directional"],
    ["plot", "attention", "--scheme", "clip", "--max-distance", "5", "--length", "10"],
    ["plot", "attention", "--scheme", "log", "--position-buckets", "16",
     "--max-relative-positions", "40", "--length", "24", "--causal", "--batch", "2",
     "--show-heads", "0,2"],
    ["plot", "curve", "--scheme", "t5", "--unidirectional"],
    ["plot", "curve", "--scheme", "clip", "--max-distance", "6", "--span", "12"],
    ["plot", "curve", "--scheme", "alibi", "--heads", "8"],
])
def test_cli_writes_png(tmp_path, argv):
    out = str(tmp_path / "out.png")
    r = run_cli(*(argv + ["-o", out]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == out
    check_png(out, min_w=200)


def test_cli_default_output(tmp_path):
    r = run_cli("plot", "curve", "--scheme", "clip", cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "rpe-curve.png"
    check_png(str(tmp_path / "rpe-curve.png"))


def test_cli_table_file(tmp_path):
    table = np.linspace(-1, 1, 9 * 2, dtype=np.float32).reshape(9, 2)
    np.save(str(tmp_path / "t.npy"), table)
    out = str(tmp_path / "t.png")
    r = run_cli("plot", "bias", "--scheme", "clip", "--max-distance", "4",
                "--table", str(tmp_path / "t.npy"), "--length", "12", "-o", out)
    assert r.returncode == 0, r.stderr
    check_png(out, min_w=200)


@needs_compile
def test_cli_compiled(tmp_path):
    for kind in ("bias", "attention"):
        out = str(tmp_path / (kind + ".png"))
        r = run_cli("plot", kind, "--scheme", "t5", "--length", "33", "--heads", "3",
                    "--compiled", "-o", out)
        assert r.returncode == 0, r.stderr
        check_png(out)


@pytest.mark.parametrize("argv, message", [
    ([], "required"),
    (["plot"], "required"),
    (["plot", "heat"], "invalid choice"),
    (["plot", "bias", "--scheme", "rope"], "invalid choice"),
    (["plot", "bias", "--length", "0"], "argument --length: must be in"),
    (["plot", "bias", "--length", "ten"], "argument --length: must be an integer"),
    (["plot", "bias", "--length", "100000"], "argument --length: must be in"),
    (["plot", "bias", "--heads", "0"], "argument --heads: must be in"),
    (["plot", "bias", "--scheme", "t5", "--num-buckets", "32", "--max-distance", "8"],
     "max_distance must be > 8"),
    (["plot", "bias", "--scheme", "t5", "--num-buckets", "2"], "num_buckets must be >= 4"),
    (["plot", "bias", "--scheme", "log", "--position-buckets", "1"], "position_buckets"),
    (["plot", "bias", "--scheme", "log", "--position-buckets", "64",
      "--max-relative-positions", "20"], "max_relative_positions must be >"),
    (["plot", "bias", "--scheme", "window2d", "--window", "7x"], "window must be HxW"),
    (["plot", "bias", "--scheme", "window2d", "--window", "3x3", "--length", "10"],
     "fixed to H*W = 9"),
    (["plot", "bias", "--show-heads", "0,7"], "--show-heads 7 out of range"),
    (["plot", "bias", "--std", "-1"], "--std must be a positive"),
    (["plot", "bias", "--table", "/nonexistent/t.npy"], "cannot read --table"),
    (["plot", "bias", "--scheme", "alibi", "--table", "x.npy"], "does not apply"),
    (["plot", "bias", "-o", "out.jpg"], "must be a .png"),
    (["plot", "bias", "-o", "/nonexistent-dir/out.png"], "does not exist"),
    (["plot", "curve", "--scheme", "window2d"], "window2d has no 1-D distance"),
    (["plot", "curve", "--length", "5"], "unrecognized arguments"),
    (["plot", "attention", "--head-dim", "0"], "argument --head-dim: must be in"),
    (["plot", "attention", "--content-scale", "-2"], "--content-scale must be >= 0"),
])
def test_cli_errors(tmp_path, argv, message):
    r = run_cli(*argv, cwd=str(tmp_path))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert "error:" in r.stderr and message in r.stderr, r.stderr
    assert os.listdir(str(tmp_path)) == []


def test_cli_compiled_without_library(tmp_path):
    """A runtime failure (no rpe library) is one message and status 1."""
    r = run_cli("plot", "bias", "--compiled", "-o", str(tmp_path / "x.png"),
                RPE_LIBRARY=str(tmp_path / "missing-librpe-c.so"))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "rpe plot: error:" in r.stderr, r.stderr
    assert not os.path.exists(str(tmp_path / "x.png"))


def test_cli_table_wrong_shape(tmp_path):
    np.save(str(tmp_path / "t.npy"), np.zeros((5, 2), np.float32))
    r = run_cli("plot", "bias", "--scheme", "clip", "--max-distance", "4",
                "--table", str(tmp_path / "t.npy"), cwd=str(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "has shape (5, 2)" in r.stderr and "needs 9 x H" in r.stderr, r.stderr
