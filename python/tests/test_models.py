"""Models exported from Hugging Face transformers by torch-mlir
(python/tools/export_torch_models.py; fixtures committed, no torch needed):
compiled by rpe (fused path, and the unfused reference path) and compared
with transformers' output, f32, 1e-5 relative to the largest value.
That attention is raised is checked by test/Integration/Models/*.test."""

import glob
import json
import os

import numpy as np
import pytest

import rpe

from test_score_producers import llama3_inv_freq_f32, rpe_opt

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(os.path.splitext(os.path.basename(p))[0]
                for p in glob.glob(os.path.join(HERE, "fixtures", "models", "*.mlir")))


def load(name):
    base = os.path.join(HERE, "fixtures", "models", name)
    with open(base + ".mlir") as f:
        text = f.read()
    with np.load(base + ".npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    inputs = [arrays["input%d" % i] for i in range(len(arrays) - 1)]
    return text, inputs, arrays["output"], meta


def test_fixtures_present():
    assert {"t5_encoder", "t5_decoder", "llama", "deberta_v2", "bloom",
            "swin", "mistral", "gemma2", "modernbert"} <= set(MODELS)


def test_deberta_uses_erf():
    """DeBERTa-v2's exact GELU is math.erf, which the CPU pipeline lowers
    (rpe-legalize-math); the fixture must keep exercising it."""
    assert "math.erf" in load("deberta_v2")[0]


# The lowering paths; RPE_DIFF_SKIP_PATHS leaves some out, as in
# test_differential.py (the sanitized CI stage runs the fused one: stage 1
# runs all three).
PATHS = [p for p in ("fused", "reference", "gpu") if p not in
         os.environ.get("RPE_DIFF_SKIP_PATHS", "").split(",")]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", MODELS)
def test_model_matches_transformers(name, path):
    """The model compiled by the CPU pipeline (fused or reference attention)
    and by rpe-nvptx-pipeline's kernels emulated on the CPU ("gpu": the
    SIMT attention kernel, every other op a kernel of its own)."""
    reference = path == "reference"
    text, inputs, want, meta = load(name)
    if path == "gpu":
        mod = rpe.compile(text, target="nvptx-emulated")
    else:
        mod = rpe.compile(text, reference=reference, num_threads=2)
    got = getattr(mod, name)(*inputs)
    assert got.shape == want.shape
    scale = float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale,
                               err_msg="%s (%s)" % (name, meta["versions"]))


@pytest.mark.parametrize("target", ["cpu", "nvptx-emulated"])
def test_llama_with_llama3_rope_scaling(target):
    """The LLaMA fixture with its inv_freq (θ = 10^4, head dim 8) as a
    Llama 3.1-style config computes it (factor 8, low_freq_factor 1,
    high_freq_factor 4, original 2048: one frequency smoothed, one divided):
    both rotations are raised to rpe.rotary with that scaling, and the fused
    model (on the CPU, or rpe-nvptx-pipeline's kernels emulated on it)
    equals the reference path's, which computes the front end's own
    f32 tables (the unscaled frequencies move the output by 3.8e-5 of its
    largest value at these 16 positions, almost four times the
    tolerance)."""
    text, inputs, _, _ = load("llama")
    blob = '"0x040000000000803FCDCCCC3D0AD7233C6F12833A"'
    assert text.count(blob) == 1  # inv_freq = 1, 0.1, 0.01, 0.001
    inv = llama3_inv_freq_f32(1e4, 8, 8.0, 1.0, 4.0, 2048)
    assert inv[2] != np.float32(0.01) and inv[3] != np.float32(0.001)
    text = text.replace(blob, '"0x04000000%s"' % inv.astype("<f4").tobytes().hex().upper())
    raised = rpe_opt(text, "-rpe-normalize-attention", "-rpe-fuse-attention")
    scaling = ("scaling = #rpe.rope_llama3<factor = 8.000000e+00, "
               "low_freq_factor = 1.000000e+00, high_freq_factor = "
               "4.000000e+00, original_max_position = 2048>")
    assert raised.count("rpe.rotary") == 4 and raised.count(scaling) == 4
    assert "math.cos" not in raised
    if target == "cpu":
        fused = rpe.compile(text, num_threads=2).llama(*inputs)
    else:
        fused = rpe.compile(text, target=target).llama(*inputs)
    reference = rpe.compile(text, reference=True, num_threads=2).llama(*inputs)
    scale = float(np.abs(reference).max())
    np.testing.assert_allclose(fused, reference, rtol=0, atol=1e-5 * scale)


def test_import_torch_cli_errors(tmp_path, capsys):
    """Without torch / torch-mlir (as in CI) or with a bad factory: status 1
    and a one-line message, no traceback."""
    from rpe.__main__ import main
    out = str(tmp_path / "m.mlir")
    for spec in ("no_colon", "json:no_such_factory", "no_such_module_xyz:make"):
        assert main(["import-torch", spec, "-o", out]) == 1
        err = capsys.readouterr().err
        assert err.startswith("python -m rpe import-torch: ") and "Traceback" not in err
    assert not os.path.exists(out)
