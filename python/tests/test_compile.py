"""rpe.compile and calling compiled functions on NumPy arrays: marshalling,
dtypes, dynamic shapes, ownership, and clear errors for bad input."""

import os
import stat

import numpy as np
import pytest

import rpe
from rpe import reference as ref

MODULE = """
func.func @bias_and_alibi(%table: tensor<5x2xf32>, %off: index)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = rpe.relative_bias %table offset %off by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x3x4xf32>
  %1 = rpe.alibi offset %off slopes [0.5, 0.25] symmetric : tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
func.func @bias(%table: tensor<5x2xf32>, %lq: index, %lk: index) -> tensor<2x?x?xf32> {
  %0 = rpe.relative_bias %table sizes(%lq, %lk) by clip<max_distance = 2> : tensor<5x2xf32> -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}
func.func @bucket(%i: index, %j: index) -> index {
  %0 = rpe.bucket %i, %j by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
  return %0 : index
}
func.func @ident(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
func.func @twice(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  return %x, %x : tensor<?x4xf32>, tensor<?x4xf32>
}
func.func @computed_twice(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0 = arith.addf %x, %x : tensor<?x4xf32>
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0, %0, %c, %c : tensor<?x4xf32>, tensor<?x4xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @overwrite(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %v = arith.constant 42.0 : f32
  %0 = tensor.insert %v into %x[%c0, %c0] : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
func.func @nothing(%x: tensor<?x4xf32>) {
  return
}
func.func @rotary_bf16(%x: tensor<2x3x8xbf16>, %p: tensor<3xi32>) -> tensor<2x3x8xbf16> {
  %0 = rpe.rotary %x, %p : tensor<2x3x8xbf16>, tensor<3xi32>
  return %0 : tensor<2x3x8xbf16>
}
func.func @rotary_f16(%x: tensor<?x8xf16>, %p: tensor<?xi64>) -> tensor<?x8xf16> {
  %0 = rpe.rotary %x, %p {interleaved} : tensor<?x8xf16>, tensor<?xi64>
  return %0 : tensor<?x8xf16>
}
func.func @scale(%x: f32, %y: f64, %n: i32) -> f64 {
  %a = arith.extf %x : f32 to f64
  %b = arith.sitofp %n : i32 to f64
  %c = arith.mulf %a, %y : f64
  %d = arith.addf %c, %b : f64
  return %d : f64
}
func.func @vec(%v: vector<4xf32>) -> vector<4xf32> {
  return %v : vector<4xf32>
}
"""


@pytest.fixture(scope="module")
def mod():
    return rpe.compile(MODULE, name="test_compile.mlir")


TABLE = np.arange(10, dtype=np.float32).reshape(5, 2)


def test_functions_and_signatures(mod):
    assert {"bias_and_alibi", "bias", "bucket", "ident", "nothing"} <= set(
        mod.functions)
    assert "bias(tensor<5x2xf32>, index, index)" in repr(mod)
    assert "bucket" in dir(mod)


def test_several_results_and_scalar_argument(mod):
    bias, alibi = mod.bias_and_alibi(TABLE, 3)
    np.testing.assert_array_equal(
        bias, ref.relative_bias(TABLE, 3, 4, ref.Clip(2), q_offset=3))
    np.testing.assert_allclose(
        alibi, ref.alibi(2, 3, 4, slopes=[0.5, 0.25], symmetric=True,
                         q_offset=3), rtol=0, atol=0)


@pytest.mark.parametrize("lq,lk", [(1, 1), (7, 3), (3, 11), (0, 5)])
def test_dynamic_result_shape(mod, lq, lk):
    out = mod.bias(TABLE, lq, lk)
    assert out.shape == (2, lq, lk)
    np.testing.assert_array_equal(
        out, ref.relative_bias(TABLE, lq, lk, ref.Clip(2)))


def test_scalar_result(mod):
    assert mod.bucket(0, 200) == 31
    assert mod.bucket(7, 7) == 0


def test_mixed_scalars(mod):
    assert mod.scale(1.5, 2.0, 3) == pytest.approx(6.0)
    assert mod.scale(np.float32(0.5), np.float64(4.0), np.int32(-1)) == \
        pytest.approx(1.0)


def test_results_aliasing_inputs_are_copies(mod):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = mod.ident(x)
    np.testing.assert_array_equal(y, x)
    y[0, 0] = -1
    assert x[0, 0] == 0
    a, b = mod.twice(x)
    np.testing.assert_array_equal(a, b)


def test_results_returned_twice_are_separate_arrays(mod):
    """A value returned twice (computed or constant) gives two arrays: a
    write into one leaves the other alone (rpe-owned-results)."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    a, b, c, d = mod.computed_twice(x)
    np.testing.assert_array_equal(a, 2 * x)
    np.testing.assert_array_equal(b, 2 * x)
    np.testing.assert_array_equal(c, [1, 2])
    a[0, 0] = -1
    c[0] = -1
    assert b[0, 0] == 0 and d[0] == 1
    assert not np.shares_memory(a, b) and not np.shares_memory(c, d)


def test_inputs_are_never_written(mod):
    x = np.ones((2, 4), dtype=np.float32)
    y = mod.overwrite(x)
    assert y[0, 0] == 42 and x[0, 0] == 1


def test_no_results(mod):
    assert mod.nothing(np.zeros((1, 4), np.float32)) is None


def test_non_contiguous_inputs_are_copied(mod):
    x = np.arange(40, dtype=np.float32).reshape(5, 8)[:, ::2]
    assert not x.flags.c_contiguous
    np.testing.assert_array_equal(mod.ident(x), x)
    f = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(mod.ident(f), f)


def test_read_only_and_subclassed_inputs(mod):
    """Arrays that are not plain writable ndarrays are passed as they
    are (read) or converted, with the same results."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    frozen = x.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(mod.ident(frozen), x)

    class Tagged(np.ndarray):
        pass

    np.testing.assert_array_equal(mod.ident(x.view(Tagged)), x)
    # A result is a writable array of its own.
    out = mod.ident(frozen)
    out[0, 0] = -1
    assert frozen[0, 0] == 0


def test_bf16_and_f16(mod):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    p = np.array([0, 5, 9], np.int32)
    out = mod.rotary_bf16(x, p)
    assert out.dtype == np.float32
    # bf16 has 8 significant bits; inputs and outputs are rounded.
    np.testing.assert_allclose(out, ref.rotary(x, p), rtol=2e-2, atol=2e-2)
    xh = rng.standard_normal((4, 8)).astype(np.float16)
    ph = np.array([1, 2, 300, 4000], np.int64)
    outh = mod.rotary_f16(xh, ph)
    assert outh.dtype == np.float16
    np.testing.assert_allclose(outh.astype(np.float64),
                               ref.rotary(xh, ph, interleaved=True),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("args,error,message", [
    ((TABLE,), TypeError, "takes 3 arguments"),
    ((TABLE, 1, 2, 3), TypeError, "takes 3 arguments"),
    ((TABLE.astype(np.float64), 1, 2), TypeError, "expects dtype float32"),
    # float32 in the other byte order is not the float32 the function reads.
    ((TABLE.astype(">f4"), 1, 2), TypeError, "expects dtype float32"),
    ((TABLE.reshape(10), 1, 2), ValueError, "expects rank 2"),
    ((np.zeros((4, 2), np.float32), 1, 2), ValueError,
     "expects size 5 in dimension 0"),
    (([[0.0] * 2] * 5, 1, 2), TypeError, "expects a NumPy array"),
    ((TABLE, 1.5, 2), TypeError, "expects an integer"),
    ((TABLE, np.array([1, 2]), 2), TypeError, "expects a scalar"),
])
def test_bad_arguments(mod, args, error, message):
    with pytest.raises(error, match=message):
        mod.bias(*args)


def test_bf16_needs_float32(mod):
    with pytest.raises(TypeError, match="float32 array"):
        mod.rotary_bf16(np.zeros((2, 3, 8), np.float16),
                        np.zeros(3, np.int32))


def test_unsupported_type(mod):
    with pytest.raises(TypeError, match="cannot be passed from Python"):
        mod.vec(np.zeros(4, np.float32))


def test_unknown_function(mod):
    with pytest.raises(AttributeError, match="no public function 'missing'"):
        mod.missing


@pytest.mark.parametrize("text,message", [
    ("func.func @f( {", "test.mlir:1:14: error: expected non-function type"),
    ("func.func @f(%t: tensor<8x2xf32>) -> tensor<2x4x4xf32> {\n"
     "  %0 = rpe.relative_bias %t by clip<max_distance = 4> : "
     "tensor<8x2xf32> -> tensor<2x4x4xf32>\n"
     "  return %0 : tensor<2x4x4xf32>\n}",
     "test.mlir:2:8: error: 'rpe.relative_bias' op table has 8 bucket rows"),
    ("func.func @f() -> index {\n  %0 = gpu.thread_id x\n"
     "  return %0 : index\n}", "cannot lower 'gpu.thread_id'"),
    ("func.func @f() {\n  return\n}\nmodule {\n}",
     "test.mlir:4:1: error: nested modules are not supported"),
])
def test_compile_errors_carry_diagnostics(text, message):
    with pytest.raises(rpe.CompileError) as info:
        rpe.compile(text, name="test.mlir")
    assert message in info.value.diagnostics
    assert message in str(info.value)


@pytest.mark.parametrize("kwargs,message", [
    ({"target": "cuda", "chip": "sm_5"}, "unknown --chip=sm_5"),
    ({"target": "cuda", "chip": "sm_999"}, "unknown --chip=sm_999"),
    ({"target": "tpu"}, "unknown target 'tpu'"),
    ({"opt_level": 9}, "optimization level must be 0..3"),
    ({"cpu": "not-a-cpu"}, "unknown CPU 'not-a-cpu'"),
    ({"num_threads": 5000}, "--num-threads must be at most 1024, got 5000"),
    # A key tile that would overflow a thread's stack (it segfaulted).
    ({"tile_k": 100000}, r"scores take \d+ KiB of stack per thread"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(rpe.CompileError, match=message):
        rpe.compile("func.func @f() { return }", **kwargs)


@pytest.mark.parametrize("kwargs,error,message", [
    # ctypes would have wrapped these to 2 and 64 without a word.
    ({"num_threads": 2**32 + 2}, ValueError,
     r"num_threads = 4294967298 does not fit the C API's 32-bit integer"),
    ({"tile_k": 2**64 + 64}, ValueError, "tile_k = .* does not fit"),
    ({"tile_q": 2.5}, TypeError, "tile_q must be an integer, got 2.5"),
    ({"opt_level": True}, TypeError, "opt_level must be an integer"),
])
def test_option_not_a_c_integer(kwargs, error, message):
    with pytest.raises(error, match=message):
        rpe.compile("func.func @f() { return }", **kwargs)


@pytest.mark.parametrize("kwargs,error,message", [
    # .encode() raised AttributeError for these.
    ({"name": None}, TypeError, "rpe.compile: name must be a str, got NoneType"),
    ({"cpu": 3}, TypeError, "rpe.compile: cpu must be a str, got int"),
    ({"target": None}, TypeError, "rpe.compile: target must be a str"),
    ({"chip": b"sm_80"}, TypeError, "rpe.compile: chip must be a str, got bytes"),
    ({"gpu_kernel_options": None}, TypeError,
     "rpe.compile: gpu_kernel_options must be a str"),
    ({"output": 5}, TypeError, "expected str, bytes or os.PathLike"),
    # ctypes cut these at the NUL: "znver4" and "/tmp/x".
    ({"cpu": "znver4\0junk"}, ValueError,
     r"rpe.compile: cpu contains a NUL character: 'znver4\\x00junk'"),
    ({"output": "/tmp/x\0.so"}, ValueError, "output contains a NUL"),
])
def test_option_not_a_c_string(kwargs, error, message):
    with pytest.raises(error, match=message):
        rpe.compile("func.func @f() { return }", **kwargs)


def test_output_path_like(tmp_path):
    # A pathlib.Path raised AttributeError ('PosixPath' has no 'encode').
    path = tmp_path / "module.so"
    m = rpe.compile("func.func @one() -> index {\n %c = arith.constant 1 : "
                    "index\n return %c : index\n}", output=path, opt_level=0)
    assert m.one() == 1
    assert path.exists()


def test_not_text():
    with pytest.raises(TypeError, match="expects MLIR text"):
        rpe.compile(b"func.func @f() { return }")


def test_output_path_is_kept(tmp_path):
    path = str(tmp_path / "keep.so")
    m = rpe.compile("func.func @one() -> index {\n %c = arith.constant 1 : "
                    "index\n return %c : index\n}", output=path, opt_level=0)
    assert m.one() == 1
    assert os.path.exists(path)


def test_output_write_error_is_a_compile_error():
    # /dev/full takes no bytes: a CompileError naming it, and /dev/full is
    # written through (still a device), not replaced by the library.
    with pytest.raises(rpe.CompileError,
                       match="cannot write '/dev/full': No space left"):
        rpe.compile("func.func @f() { return }", output="/dev/full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


ATTENTION = """
func.func @attn(%q: tensor<2x4x?x8xf32>, %k: tensor<2x2x?x8xf32>, %v: tensor<2x2x?x8xf32>,
                %len: tensor<2xi32>, %off: index) -> tensor<2x4x?x8xf32> {
  %o = rpe.attention %q, %k, %v key_lengths(%len : tensor<2xi32>) q_offset(%off) causal
      : tensor<2x4x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %o : tensor<2x4x?x8xf32>
}
"""


@pytest.mark.parametrize("options", [
    {}, {"num_threads": 2}, {"reference": True}, {"tile_q": 3, "tile_k": 5},
    {"num_threads": 2, "tile_q": 1, "tile_k": 1, "cpu": "native",
     "opt_level": 3}, {"verify_each": True},
    {"verify_each": True, "target": "nvptx-emulated"}])
def test_pipeline_options_agree_with_reference(options):
    rng = np.random.default_rng(7)
    q = rng.standard_normal((2, 4, 13, 8)).astype(np.float32)
    k = rng.standard_normal((2, 2, 17, 8)).astype(np.float32)
    v = rng.standard_normal((2, 2, 17, 8)).astype(np.float32)
    lens = np.array([17, 6], np.int32)
    got = rpe.compile(ATTENTION, **options).attn(q, k, v, lens, 4)
    want = ref.attention(q, k, v, key_lengths=lens, q_offset=4, causal=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bad_tile_option():
    with pytest.raises(rpe.CompileError, match="tile sizes must be positive"):
        rpe.compile(ATTENTION, tile_q=0)


def test_temporary_directory_is_removed(tmp_path, monkeypatch):
    """rpe.compile's temporary directory goes with the module, and at once
    when compilation fails (diagnostic) or the library cannot be loaded."""
    import gc
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(rpe.CompileError, match="unknown CPU"):
        rpe.compile(MODULE, cpu="not-a-cpu")
    assert list(tmp_path.iterdir()) == []
    mod = rpe.compile(MODULE)
    assert len(list(tmp_path.iterdir())) == 1
    del mod
    gc.collect()
    assert list(tmp_path.iterdir()) == []
    import ctypes
    def broken(*args, **kwargs):
        raise OSError("simulated dlopen failure")
    monkeypatch.setattr(ctypes, "CDLL", broken)
    with pytest.raises(rpe.CompileError, match="simulated dlopen failure"):
        rpe.compile(MODULE)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("line, message", [
    ("%x = arith.constant {a = array<index: 1, 0>} 0 : index",
     "dense arrays of 'index'.*not supported"),
    ("linalg.matmul<[32, 1]>>", "<rpe.compile>:2:16: error: expected a dictionary "
     r"of properties \('<\{\.\.\.\}>'\)"),
    ("%e = tensor.empty() : tensor<4xf32>\n  %g = linalg.generic "
     "{indexing_maps = [affine_map<(d) -> (d)>], iterator_types = [1]} "
     "outs(%e : tensor<4xf32>) {\n  ^bb0(%x: f32):\n    linalg.yield %x : "
     "f32\n  } -> tensor<4xf32>",
     r"<rpe.compile>:3:66: error: expected 'iterator_types = \[' strings"),
])
def test_text_the_upstream_parser_crashes_on_is_rejected(line, message):
    """MLIR 22's parser crashes on array<index: ...>, on properties of a
    custom-form linalg op that are not a dictionary and on a custom-form
    linalg.generic whose iterator_types are not strings; rpe reports
    them."""
    text = "func.func @f() {\n  " + line + "\n  return\n}\n"
    with pytest.raises(rpe.CompileError, match=message):
        rpe.compile(text)


@pytest.mark.parametrize("depth, ok", [(990, True), (5000, False)])
def test_deeply_nested_brackets(depth, ok):
    """MLIR 22's parser recurses per bracket and overflows the stack a few
    thousand levels down (an array nested 6800 deep crashed it): rpe
    rejects more than 1000 levels with an error instead, and takes a
    990-deep attribute."""
    text = ("func.func @f(%x: f32) -> f32 attributes {a = " + "[" * depth
            + "1" + "]" * depth + "} {\n  return %x : f32\n}\n")
    if ok:
        module = rpe.compile(text)
        assert module.f(2.5) == 2.5
    else:
        with pytest.raises(rpe.CompileError,
                           match=r"<rpe.compile>:1:\d+: error: brackets nested "
                                 r"more than 1000 deep"):
            rpe.compile(text)


LAYERS = """
func.func @layers(%q: tensor<1x2x?x16xf32>, %n: index) -> tensor<1x2x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %q) -> tensor<1x2x?x16xf32> {
    %o = rpe.attention %acc, %q, %q causal : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
    scf.yield %o : tensor<1x2x?x16xf32>
  }
  return %r : tensor<1x2x?x16xf32>
}
"""


@pytest.mark.parametrize("options", [{}, {"reference": True},
                                     {"num_threads": 2}])
def test_attention_in_a_loop(options):
    # A loop over layers that carries attention's result (one-shot-bufferize
    # rejected it); n = 0, 1, 3 iterations against rpe.reference, then many
    # iterations at a larger size without the memory growing (each
    # iteration frees the buffer it replaced).
    import resource
    m = rpe.compile(LAYERS, **options)
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 2, 13, 16)).astype(np.float32)
    for n in (0, 1, 3):
        want = q.astype(np.float64)
        for _ in range(n):
            want = ref.attention(want, q, q, causal=True)
        np.testing.assert_allclose(m.layers(q, n), want, rtol=1e-5, atol=1e-6)
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        return  # ASan's quarantine keeps freed memory resident by design
    big = rng.standard_normal((1, 2, 1024, 16)).astype(np.float32)
    m.layers(big, 2)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m.layers(big, 400)  # 128 KiB per iteration: 50 MiB if none were freed
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 16 * 1024, grown_kib
