#!/usr/bin/env bash
# The README's main job: installs what is missing, builds rpe, shows rpe-opt
# folding and canonicalizing examples/demo.mlir, then compiles the T5-bias
# attention example ahead of time with rpe-compile, links it into a C program
# and runs it (maximum error against a C reference, and the time).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
./scripts/build.sh "$BUILD_DIR"

echo "== rpe-opt examples/demo.mlir -canonicalize =="
echo "   (buckets folded, a one-bucket table broadcast, rotations composed,"
echo "    a zero bias dropped; the input is examples/demo.mlir)"
"$BUILD_DIR/bin/rpe-opt" examples/demo.mlir -canonicalize

out="$BUILD_DIR/examples/t5-attention"
mkdir -p "$out"
echo
echo "== rpe-compile examples/t5-attention/t5_attention.mlir --emit=obj -O3 --mcpu=native =="
"$BUILD_DIR/bin/rpe-compile" examples/t5-attention/t5_attention.mlir \
  --target=cpu --emit=obj -O3 --mcpu=native \
  -o "$out/t5_attention.o" --header "$out/t5_attention.h"
cc -O2 -I"$out" examples/t5-attention/main.c "$out/t5_attention.o" -lm \
  -o "$out/t5-attention"
echo "built $out/t5-attention (header: $out/t5_attention.h)"
"$out/t5-attention" "${L:-256}" 5

echo
echo "== python3 -m rpe plot bias: a T5-bias head computed by the compiled relative_bias =="
png="$BUILD_DIR/examples/t5_bias_heads.png"
/usr/bin/python3 -m rpe plot bias --scheme t5 --num-buckets 32 --max-distance 128 \
  --heads 4 --length 96 --compiled -o "$png"
echo "heatmap written to $PWD/$png"
