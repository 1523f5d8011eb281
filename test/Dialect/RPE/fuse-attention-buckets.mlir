// RUN: rpe-opt %s -rpe-fuse-attention -split-input-file | FileCheck %s
// With the evaluation limits at 0 nothing is evaluated, so nothing is
// raised; negative limits are an error.
// RUN: rpe-opt %s -rpe-fuse-attention="bucket-max-pairs=0 bucket-max-diagonals=0" -split-input-file | FileCheck %s --check-prefix=NOLIMIT
// RUN: not rpe-opt %s -rpe-fuse-attention=bucket-max-pairs=-1 2>&1 | FileCheck %s --check-prefix=NEG --implicit-check-not=error:
// NOLIMIT-NOT: rpe.bucket
// NEG: error: rpe-fuse-attention: bucket-max-pairs and bucket-max-diagonals must not be negative, got -1 and 1048576

// rpe-fuse-attention (e): index code on the positions in score_mod that
// equals an rpe bucketing scheme at every position of the attention's
// static domain becomes rpe.bucket; bounds checks that hold everywhere go.

// transformers' T5 bucket arithmetic (bidirectional, 32 buckets, distance
// 128) at L = 4096: 16.7M position pairs, evaluated once per diagonal since
// the code reads i and j only through j - i.
// CHECK-LABEL: func.func @t5_long
// CHECK: rpe.attention
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[B:.*]] = rpe.bucket %[[I]], %[[J]] by t5<num_buckets = 32, max_distance = 128, bidirectional = true>
// CHECK-NEXT: %[[V:.*]] = tensor.extract %{{.*}}[%[[B]], %[[H]]] : tensor<32x2xf32>
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[S]], %[[V]] : f32
// CHECK-NEXT: rpe.yield %[[R]] : f32
func.func @t5_long(%q: tensor<1x2x4096x8xf32>, %t: tensor<32x2xf32>) -> tensor<1x2x4096x8xf32> {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %c15 = arith.constant 15 : i64
  %c16 = arith.constant 16 : i64
  %c32 = arith.constant 32 : index
  %e = arith.constant 8.0 : f32
  %lg = arith.constant 2.7725887222397811 : f64
  %0 = rpe.attention %q, %q, %q scale = 1.0 : tensor<1x2x4096x8xf32>, tensor<1x2x4096x8xf32>, tensor<1x2x4096x8xf32> -> tensor<1x2x4096x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cj = arith.index_cast %j : index to i64
    %ci = arith.index_cast %i : index to i64
    %d = arith.subi %cj, %ci : i64
    %pos = arith.cmpi sgt, %d, %c0 : i64
    %pe = arith.extui %pos : i1 to i64
    %off = arith.muli %pe, %c16 : i64
    %a = math.absi %d : i64
    %small = arith.cmpi slt, %a, %c8 : i64
    %af = arith.sitofp %a : i64 to f32
    %r = arith.divf %af, %e : f32
    %l = math.log %r : f32
    %lg32 = arith.truncf %lg : f64 to f32
    %x = arith.divf %l, %lg32 : f32
    %y = arith.mulf %x, %e : f32
    %yi = arith.fptosi %y : f32 to i64
    %z = arith.addi %yi, %c8 : i64
    %zc = arith.minsi %z, %c15 : i64
    %sel = arith.select %small, %a, %zc : i64
    %bk = arith.addi %off, %sel : i64
    %bi = arith.index_cast %bk : i64 to index
    %inb = arith.cmpi slt, %bi, %c32 : index
    cf.assert %inb, "index must be smaller than dim size"
    %nneg = arith.cmpi sge, %bk, %c0 : i64
    cf.assert %nneg, "index must be larger or equal to 0"
    %v = tensor.extract %t[%bi, %h] : tensor<32x2xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x2x4096x8xf32>
}

// -----

// The same code with log(100/8): max_distance comes from the constant.
// With a query offset of 5 (a constant) the positions are i + 5.
// CHECK-LABEL: func.func @t5_distance_100
// CHECK: rpe.bucket %{{.*}}, %{{.*}} by t5<num_buckets = 32, max_distance = 100, bidirectional = true>
// CHECK-NOT: math.log
func.func @t5_distance_100(%q: tensor<1x1x300x8xf32>, %k: tensor<1x1x310x8xf32>, %t: tensor<32x1xf32>) -> tensor<1x1x300x8xf32> {
  %c0 = arith.constant 0 : i64
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : i64
  %c15 = arith.constant 15 : i64
  %c16 = arith.constant 16 : i64
  %e = arith.constant 8.0 : f32
  %lg = arith.constant 2.5257286443082556 : f64
  %0 = rpe.attention %q, %k, %k q_offset(%c5) scale = 1.0 : tensor<1x1x300x8xf32>, tensor<1x1x310x8xf32>, tensor<1x1x310x8xf32> -> tensor<1x1x300x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cj = arith.index_cast %j : index to i64
    %ci = arith.index_cast %i : index to i64
    %d = arith.subi %cj, %ci : i64
    %pos = arith.cmpi sgt, %d, %c0 : i64
    %pe = arith.extui %pos : i1 to i64
    %off = arith.muli %pe, %c16 : i64
    %a = math.absi %d : i64
    %small = arith.cmpi slt, %a, %c8 : i64
    %af = arith.sitofp %a : i64 to f32
    %r = arith.divf %af, %e : f32
    %l = math.log %r : f32
    %lg32 = arith.truncf %lg : f64 to f32
    %x = arith.divf %l, %lg32 : f32
    %y = arith.mulf %x, %e : f32
    %yi = arith.fptosi %y : f32 to i64
    %z = arith.addi %yi, %c8 : i64
    %zc = arith.minsi %z, %c15 : i64
    %sel = arith.select %small, %a, %zc : i64
    %bk = arith.addi %off, %sel : i64
    %bi = arith.index_cast %bk : i64 to index
    %v = tensor.extract %t[%bi, %h] : tensor<32x1xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x1x300x8xf32>
}

// -----

// The last log bucket capped at 14 instead of 15: no scheme of rpe computes
// that, so the code stays; the check `bucket < 32` holds everywhere and goes.
// CHECK-LABEL: func.func @t5_perturbed
// CHECK-NOT: rpe.bucket
// CHECK: math.log
// CHECK-NOT: cf.assert
// CHECK: rpe.yield
func.func @t5_perturbed(%q: tensor<1x1x300x8xf32>, %t: tensor<32x1xf32>) -> tensor<1x1x300x8xf32> {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %c14 = arith.constant 14 : i64
  %c16 = arith.constant 16 : i64
  %c32 = arith.constant 32 : index
  %e = arith.constant 8.0 : f32
  %lg = arith.constant 2.7725887222397811 : f64
  %0 = rpe.attention %q, %q, %q scale = 1.0 : tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32>, tensor<1x1x300x8xf32> -> tensor<1x1x300x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %cj = arith.index_cast %j : index to i64
    %ci = arith.index_cast %i : index to i64
    %d = arith.subi %cj, %ci : i64
    %pos = arith.cmpi sgt, %d, %c0 : i64
    %pe = arith.extui %pos : i1 to i64
    %off = arith.muli %pe, %c16 : i64
    %a = math.absi %d : i64
    %small = arith.cmpi slt, %a, %c8 : i64
    %af = arith.sitofp %a : i64 to f32
    %r = arith.divf %af, %e : f32
    %l = math.log %r : f32
    %lg32 = arith.truncf %lg : f64 to f32
    %x = arith.divf %l, %lg32 : f32
    %y = arith.mulf %x, %e : f32
    %yi = arith.fptosi %y : f32 to i64
    %z = arith.addi %yi, %c8 : i64
    %zc = arith.minsi %z, %c14 : i64
    %sel = arith.select %small, %a, %zc : i64
    %bk = arith.addi %off, %sel : i64
    %bi = arith.index_cast %bk : i64 to index
    %inb = arith.cmpi slt, %bi, %c32 : index
    cf.assert %inb, "index must be smaller than dim size"
    %v = tensor.extract %t[%bi, %h] : tensor<32x1xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x1x300x8xf32>
}

// -----

// Swin: a 2×2 window (4 tokens), the relative_position_index as a constant
// (worked out by hand: (hi − hj + 1)·3 + (wi − wj + 1) for token t at
// (t div 2, t mod 2)), read at i·4 + j with torch's negative-index wrap.
// CHECK-LABEL: func.func @swin_index
// CHECK-NOT: tensor<16xi64>
// CHECK: rpe.attention
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[B:.*]] = rpe.bucket %[[I]], %[[J]] by window2d<height = 2, width = 2>
// CHECK-NEXT: tensor.extract %{{.*}}[%[[B]], %[[H]]] : tensor<9x3xf32>
// CHECK-NOT: tensor<16xi64>
func.func @swin_index(%q: tensor<8x3x4x8xf32>, %t: tensor<9x3xf32>) -> tensor<8x3x4x8xf32> {
  %idx = arith.constant dense<[4, 3, 1, 0, 5, 4, 2, 1, 7, 6, 4, 3, 8, 7, 5, 4]> : tensor<16xi64>
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : i64
  %c9 = arith.constant 9 : i64
  %0 = rpe.attention %q, %q, %q : tensor<8x3x4x8xf32>, tensor<8x3x4x8xf32>, tensor<8x3x4x8xf32> -> tensor<8x3x4x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %row = arith.muli %i, %c4 : index
    %lin = arith.addi %row, %j : index
    %x = tensor.extract %idx[%lin] : tensor<16xi64>
    %neg = arith.cmpi slt, %x, %c0 : i64
    %wrap = arith.addi %x, %c9 : i64
    %y = arith.select %neg, %wrap, %x : i64
    %yi = arith.index_cast %y : i64 to index
    %v = tensor.extract %t[%yi, %h] : tensor<9x3xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<8x3x4x8xf32>
}

// -----

// One entry of the index changed (i = 3, j = 0: 6 instead of 8): not a
// window, nothing is raised.
// CHECK-LABEL: func.func @swin_index_changed
// CHECK-NOT: rpe.bucket
// CHECK: tensor.extract %{{.*}} : tensor<16xi64>
func.func @swin_index_changed(%q: tensor<8x3x4x8xf32>, %t: tensor<9x3xf32>) -> tensor<8x3x4x8xf32> {
  %idx = arith.constant dense<[4, 3, 1, 0, 5, 4, 2, 1, 7, 6, 4, 3, 6, 7, 5, 4]> : tensor<16xi64>
  %c4 = arith.constant 4 : index
  %0 = rpe.attention %q, %q, %q : tensor<8x3x4x8xf32>, tensor<8x3x4x8xf32>, tensor<8x3x4x8xf32> -> tensor<8x3x4x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %row = arith.muli %i, %c4 : index
    %lin = arith.addi %row, %j : index
    %x = tensor.extract %idx[%lin] : tensor<16xi64>
    %yi = arith.index_cast %x : i64 to index
    %v = tensor.extract %t[%yi, %h] : tensor<9x3xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<8x3x4x8xf32>
}

// -----

// The seed's clipped distance clamp(i − j, −4, 4) + 4 with a 9-row table:
// clip<4>. A check that fails at some position (bucket < 6) is kept.
// CHECK-LABEL: func.func @clip
// CHECK-DAG: rpe.bucket %{{.*}}, %{{.*}} by clip<max_distance = 4>
// CHECK-DAG: cf.assert
// CHECK: rpe.yield
func.func @clip(%q: tensor<1x2x20x8xf32>, %t: tensor<9x2xf32>) -> tensor<1x2x20x8xf32> {
  %c4 = arith.constant 4 : index
  %cm4 = arith.constant -4 : index
  %c6 = arith.constant 6 : index
  %0 = rpe.attention %q, %q, %q : tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32> -> tensor<1x2x20x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %lo = arith.maxsi %d, %cm4 : index
    %hi = arith.minsi %lo, %c4 : index
    %bk = arith.addi %hi, %c4 : index
    %ok = arith.cmpi slt, %bk, %c6 : index
    cf.assert %ok, "bucket below 6"
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x2x20x8xf32>
}

// -----

// Dynamic lengths: the domain is unknown, nothing is raised or dropped.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: rpe.bucket
// CHECK: arith.maxsi
// CHECK: cf.assert
func.func @dynamic(%q: tensor<1x2x?x8xf32>, %t: tensor<9x2xf32>) -> tensor<1x2x?x8xf32> {
  %c4 = arith.constant 4 : index
  %cm4 = arith.constant -4 : index
  %c9 = arith.constant 9 : index
  %0 = rpe.attention %q, %q, %q : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %lo = arith.maxsi %d, %cm4 : index
    %hi = arith.minsi %lo, %c4 : index
    %bk = arith.addi %hi, %c4 : index
    %ok = arith.cmpi slt, %bk, %c9 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x2x?x8xf32>
}

// -----

// Code that reads the head (or the batch) is not a function of the
// positions: left alone.
// CHECK-LABEL: func.func @reads_head
// CHECK-NOT: rpe.bucket
// CHECK: arith.addi %{{.*}}, %{{.*}} : index
func.func @reads_head(%q: tensor<1x2x4x8xf32>, %t: tensor<9x2xf32>) -> tensor<1x2x4x8xf32> {
  %c4 = arith.constant 4 : index
  %cm4 = arith.constant -4 : index
  %0 = rpe.attention %q, %q, %q : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %dh = arith.addi %d, %h : index
    %lo = arith.maxsi %dh, %cm4 : index
    %hi = arith.minsi %lo, %c4 : index
    %bk = arith.addi %hi, %c4 : index
    %v = tensor.extract %t[%bk, %h] : tensor<9x2xf32>
    %sum = arith.addf %s, %v : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// The bucket as the last index of a gather, as DeBERTa reads its c2p and
// p2c projections ([h, i, bucket] and [h, j, bucket]): raised where it is.
// The head and position indices are block arguments and stay.
// CHECK-LABEL: func.func @projection_gather
// CHECK: rpe.attention
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT: %[[B1:.*]] = rpe.bucket %[[I]], %[[J]] by clip<max_distance = 4>
// CHECK-NEXT: %[[C2P:.*]] = tensor.extract %{{.*}}[%[[H]], %[[I]], %[[B1]]] : tensor<2x20x9xf32>
// CHECK-NEXT: %[[B2:.*]] = rpe.bucket %[[I]], %[[J]] by clip<max_distance = 4>
// CHECK-NEXT: %[[P2C:.*]] = tensor.extract %{{.*}}[%[[H]], %[[J]], %[[B2]]] : tensor<2x20x9xf32>
func.func @projection_gather(%q: tensor<1x2x20x8xf32>, %c2p: tensor<2x20x9xf32>, %p2c: tensor<2x20x9xf32>) -> tensor<1x2x20x8xf32> {
  %c4 = arith.constant 4 : index
  %cm4 = arith.constant -4 : index
  %0 = rpe.attention %q, %q, %q : tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32> -> tensor<1x2x20x8xf32> {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %lo = arith.maxsi %d, %cm4 : index
    %hi = arith.minsi %lo, %c4 : index
    %bk = arith.addi %hi, %c4 : index
    %v = tensor.extract %c2p[%h, %i, %bk] : tensor<2x20x9xf32>
    %w = tensor.extract %p2c[%h, %j, %bk] : tensor<2x20x9xf32>
    %vw = arith.addf %v, %w : f32
    %sum = arith.addf %s, %vw : f32
    rpe.yield %sum : f32
  }
  return %0 : tensor<1x2x20x8xf32>
}
