"""Run-time shape checks (rpe-insert-shape-checks) through rpe.compile: every
constraint kind rejects a violating call with a ValueError that names the
argument, the dimension and both sizes, before anything runs; calls that fit
still run."""

import numpy as np
import pytest

import rpe


def f32(*shape):
    return np.full(shape, 0.5, dtype=np.float32)


ATTN_KEY_LENGTHS = """
func.func @attn(%q: tensor<1x2x?x?xf32>, %k: tensor<1x2x?x?xf32>,
                %v: tensor<1x2x?x?xf32>, %len: tensor<1xi32>)
    -> tensor<1x2x?x?xf32> {
  %o = rpe.attention %q, %k, %v key_lengths(%len : tensor<1xi32>)
      : tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>
      -> tensor<1x2x?x?xf32>
  return %o : tensor<1x2x?x?xf32>
}
"""

ATTN_GQA_BIAS = """
func.func @attn(%q: tensor<1x?x?x16xf32>, %k: tensor<1x?x?x16xf32>,
                %v: tensor<1x?x?x16xf32>, %b: tensor<1x?x?x?xf32>)
    -> tensor<1x?x?x16xf32> {
  %o = rpe.attention %q, %k, %v bias(%b : tensor<1x?x?x?xf32>)
      : tensor<1x?x?x16xf32>, tensor<1x?x?x16xf32>, tensor<1x?x?x16xf32>
      -> tensor<1x?x?x16xf32>
  return %o : tensor<1x?x?x16xf32>
}
"""

TABLE = """
func.func @bias(%table: tensor<?x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  %b = rpe.relative_bias %table sizes(%l, %l) by clip<max_distance = 4>
      : tensor<?x2xf32> -> tensor<2x?x?xf32>
  return %b : tensor<2x?x?xf32>
}
"""

WINDOW = """
func.func @bias(%table: tensor<15x2xf32>, %l: index) -> tensor<2x?x?xf32> {
  %b = rpe.relative_bias %table sizes(%l, %l) by window2d<height = 2, width = 3>
      : tensor<15x2xf32> -> tensor<2x?x?xf32>
  return %b : tensor<2x?x?xf32>
}
"""

ROTARY = """
func.func @rope(%x: tensor<2x?x?xf32>, %p: tensor<?xi64>) -> tensor<2x?x?xf32> {
  %r = rpe.rotary %x, %p : tensor<2x?x?xf32>, tensor<?xi64>
  return %r : tensor<2x?x?xf32>
}
"""

ROTARY_DIM = """
func.func @rope(%x: tensor<2x8x?xf32>, %p: tensor<8xi64>) -> tensor<2x8x?xf32> {
  %r = rpe.rotary %x, %p {rotary_dim = 8 : i64} : tensor<2x8x?xf32>, tensor<8xi64>
  return %r : tensor<2x8x?xf32>
}
"""

MATMUL = """
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                     outs(%z : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""

# The position tables reach disentangled_bias through a linalg.generic (a
# scale, as rpe.ir writes it): their sizes are traced back to the arguments.
DEBERTA = """
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @deb(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x?x4xf32>,
               %pq: tensor<2x?x4xf32>, %pk: tensor<2x16x4xf32>)
    -> tensor<1x2x?x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %pq, %c1 : tensor<2x?x4xf32>
  %e = tensor.empty(%n) : tensor<2x?x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pq : tensor<2x?x4xf32>) outs(%e : tensor<2x?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<2x?x4xf32>
  %d = rpe.disentangled_bias %q, %k, %s, %pk
      by log<position_buckets = 0, max_relative_positions = 8> c2p p2c
      : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<2x?x4xf32>,
        tensor<2x16x4xf32> -> tensor<1x2x?x?xf32>
  return %d : tensor<1x2x?x?xf32>
}
"""


@pytest.fixture(scope="module")
def mods():
    texts = {"attn": ATTN_KEY_LENGTHS, "gqa": ATTN_GQA_BIAS, "table": TABLE,
             "window": WINDOW, "rope": ROTARY, "rope_dim": ROTARY_DIM,
             "mm": MATMUL, "deb": DEBERTA}
    return {name: rpe.compile(text) for name, text in texts.items()}


L8 = np.array([8], np.int32)

CASES = [
    # (module, function, arguments, message)
    ("attn", "attn", lambda: (f32(1, 2, 8, 16), f32(1, 2, 8, 4),
                              f32(1, 2, 8, 16), L8),
     "k (argument 1): dim 3 is 4, expected 16 (= q (argument 0) dim 3, "
     "the head dimension)"),
    ("attn", "attn", lambda: (f32(1, 2, 8, 16), f32(1, 2, 8, 16),
                              f32(1, 2, 3, 16), L8),
     "v (argument 2): dim 2 is 3, expected 8 (= k (argument 1) dim 2, "
     "the key length)"),
    ("attn", "attn", lambda: (f32(1, 2, 8, 16), f32(1, 2, 8, 16),
                              f32(1, 2, 8, 16), np.array([9], np.int32)),
     "key_lengths (argument 3)[0] is 9, expected in [0, 8]"),
    ("attn", "attn", lambda: (f32(1, 2, 8, 16), f32(1, 2, 8, 16),
                              f32(1, 2, 8, 16), np.array([-1], np.int32)),
     "key_lengths (argument 3)[0] is -1, expected in [0, 8]"),
    ("gqa", "attn", lambda: (f32(1, 3, 4, 16), f32(1, 2, 4, 16),
                             f32(1, 2, 4, 16), f32(1, 3, 4, 4)),
     "q (argument 0): dim 1 is 3, expected a positive multiple of 2 "
     "(= k (argument 1) dim 1"),
    ("gqa", "attn", lambda: (f32(1, 2, 4, 16), f32(1, 2, 5, 16),
                             f32(1, 2, 5, 16), f32(1, 2, 4, 4)),
     "bias (argument 3): dim 3 is 4, expected 5 (= k (argument 1) dim 2, "
     "the key length)"),
    ("gqa", "attn", lambda: (f32(1, 2, 4, 16), f32(1, 2, 4, 16),
                             f32(1, 2, 4, 16), f32(1, 2, 3, 4)),
     "bias (argument 3): dim 2 is 3, expected 4 (= q (argument 0) dim 2, "
     "the query length)"),
    ("table", "bias", lambda: (f32(8, 2), 5),
     "table (argument 0): dim 0 is 8, expected 9 (buckets of "
     "#rpe.clip<max_distance = 4>)"),
    ("rope", "rope", lambda: (f32(2, 8, 4), np.arange(7, dtype=np.int64)),
     "positions (argument 1): dim 0 is 7, expected 8 (= x (argument 0) "
     "dim 1, the sequence length)"),
    ("rope", "rope", lambda: (f32(2, 8, 5), np.arange(8, dtype=np.int64)),
     "x (argument 0): dim 2 is 5, expected a positive multiple of 2"),
    ("rope_dim", "rope", lambda: (f32(2, 8, 4), np.arange(8, dtype=np.int64)),
     "x (argument 0): dim 2 is 4, expected at least 8 (rotary_dim)"),
    ("mm", "mm", lambda: (f32(3, 4), f32(5, 2)),
     "linalg.matmul at"),
    ("deb", "deb", lambda: (f32(1, 2, 5, 4), f32(1, 2, 5, 4), f32(2, 15, 4),
                            f32(2, 16, 4)),
     "dim 1 is 15, expected 16 (buckets of #rpe.log<"),
]


@pytest.mark.parametrize("mod,fn,args,message", CASES,
                         ids=[c[3][:40] for c in CASES])
def test_violation_raises(mods, mod, fn, args, message):
    with pytest.raises(ValueError) as info:
        getattr(mods[mod], fn)(*args())
    assert message in str(info.value)
    assert str(info.value).startswith(fn + ": ")


def test_matmul_message_names_both_sizes(mods):
    with pytest.raises(ValueError, match=r"operand 1 \(argument 1\): dim 0 is "
                       r"5, expected 4 "
                       r"\(= operand 0 \(argument 0\) dim 1, the size of "
                       r"loop 2\)"):
        mods["mm"].mm(f32(3, 4), f32(5, 2))


def test_fitting_calls_run(mods):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(mods["mm"].mm(a, b), a @ b, rtol=1e-6)
    out = mods["attn"].attn(f32(1, 2, 8, 16), f32(1, 2, 8, 16),
                            f32(1, 2, 8, 16), np.array([0], np.int32))
    assert out.shape == (1, 2, 8, 16)
    np.testing.assert_array_equal(out, 0.0)  # no visible key: zeros
    # Window bucketing is total: lengths other than height·width run too.
    assert mods["window"].bias(f32(15, 2), 6).shape == (2, 6, 6)
    assert mods["window"].bias(f32(15, 2), 5).shape == (2, 5, 5)


def test_describe_lists_the_check(mods):
    fn = mods["attn"].attn
    assert fn.shape_check["function"] == "attn_check"
    assert len(fn.shape_check["messages"]) == 3
    assert "attn_check" not in mods["attn"].functions


def test_no_checks_when_static():
    mod = rpe.compile("""
func.func @f(%x: tensor<2x8x4xf32>, %p: tensor<8xi64>) -> tensor<2x8x4xf32> {
  %r = rpe.rotary %x, %p : tensor<2x8x4xf32>, tensor<8xi64>
  return %r : tensor<2x8x4xf32>
}
""")
    assert mod.f.shape_check["messages"] == []
