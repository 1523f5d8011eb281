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
            "swin"} <= set(MODELS)


def test_deberta_uses_erf():
    """DeBERTa-v2's exact GELU is math.erf, which the CPU pipeline lowers
    (rpe-legalize-math); the fixture must keep exercising it."""
    assert "math.erf" in load("deberta_v2")[0]


@pytest.mark.parametrize("path", ["fused", "reference", "gpu"])
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
