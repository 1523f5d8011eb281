"""Writes MLIR text whose brackets nest DEPTH deep (KIND: array, dict,
region, type, affine), for deep-nesting.mlir."""
import sys

kind, depth = sys.argv[1], int(sys.argv[2])
if kind == "array":
    print("func.func @f() attributes {a = " + "[" * depth + "]" * depth
          + "} {\n  return\n}")
elif kind == "dict":
    print("func.func @f() attributes {a = " + "{a = " * depth + "1"
          + "}" * depth + "} {\n  return\n}")
elif kind == "region":
    print("func.func @f() {\n" + '"test.op"() ({' * depth + '"test.t"() : () -> ()'
          + "}) : () -> ()" * depth + "\n  return\n}")
elif kind == "type":
    print("func.func @f(%a: " + "tuple<" * depth + "i32" + ">" * depth
          + ") {\n  return\n}")
elif kind == "affine":
    print("#m = affine_map<(d0) -> (" + "(" * depth + "d0" + ")" * depth
          + ")>\nfunc.func @f() attributes {m = #m} {\n  return\n}")
else:
    sys.exit("nest.py: unknown kind " + kind)
