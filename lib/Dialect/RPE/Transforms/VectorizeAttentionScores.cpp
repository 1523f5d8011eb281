//===- VectorizeAttentionScores.cpp - score_mod lane by lane --------------===//
//
// rpe-vectorize-attention's score terms: score_mod evaluated for a vector
// of query rows (uniform values as scalars, varying ones as vectors,
// contiguous reads where an index is base + lane), the tables it reads
// (gathers, row windows, the transposed row reads of DeBERTa's c2p), and
// the key tiles where every bucket table is constant.
//
//===----------------------------------------------------------------------===//

#include "VectorizeAttentionKernel.h"

#include "rpe/Dialect/RPE/Utils/SliceUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::rpe;
using namespace mlir::rpe::detail;

Value KernelBuilder::gather(OpBuilder &b, Value buffer, ArrayRef<Value> indices,
                            int64_t chunk, Value mask) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t w = opts.vectorWidth;
  // Linear offsets (identity layout), then a gather from a 1-D view: the
  // gather's index vector runs along the innermost dimension only.
  Value offsets;
  Value stride = cIdx(b, 1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    Value idx = indices[d];
    Value term =
        isa<VectorType>(idx.getType())
            ? arith::MulIOp::create(b, loc, idx, bcast(b, stride)).getResult()
            : bcast(b, mul(b, idx, stride));
    offsets = offsets ? arith::AddIOp::create(b, loc, offsets, term).getResult()
                      : term;
    if (d > 0)
      stride = mul(b, stride, memref::DimOp::create(b, loc, buffer, d));
  }
  Value flat = buffer;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
  }
  auto elemVec = VectorType::get({w}, type.getElementType());
  Value pass = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemVec));
  return vector::GatherOp::create(b, loc, elemVec, flat, ValueRange{cIdx(b, 0)},
                                  offsets, mask ? mask : laneValid[chunk], pass,
                                  IntegerAttr());
}

Value KernelBuilder::loadBuckets32(OpBuilder &b, Value diagonal,
                                   ValueRange at) {
  auto vecI32 = VectorType::get({opts.vectorWidth}, b.getI32Type());
  Type element = cast<MemRefType>(diagonal.getType()).getElementType();
  if (element.isInteger(32))
    return vector::LoadOp::create(b, loc, vecI32, diagonal, at);
  return arith::IndexCastOp::create(b, loc, vecI32,
                                    loadBuckets(b, diagonal, at));
}

Value KernelBuilder::loadBuckets(OpBuilder &b, Value diagonal, ValueRange at) {
  auto idxVec = VectorType::get({opts.vectorWidth}, b.getIndexType());
  Type element = cast<MemRefType>(diagonal.getType()).getElementType();
  if (element.isIndex())
    return vector::LoadOp::create(b, loc, idxVec, diagonal, at);
  Value narrow = vector::LoadOp::create(
      b, loc, VectorType::get({opts.vectorWidth}, element), diagonal, at);
  return arith::IndexCastOp::create(b, loc, idxVec, narrow);
}

SmallVector<Value> KernelBuilder::rowsAhead(OpBuilder &b, Value buffer,
                                            ArrayRef<Value> indices,
                                            int64_t distance) {
  int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
  Value lastRow =
      sub(b, memref::DimOp::create(b, loc, buffer, rank - 2), cIdx(b, 1));
  SmallVector<Value> next(indices);
  next[rank - 2] = minI(b, add(b, next[rank - 2], cIdx(b, distance)), lastRow);
  return next;
}

void KernelBuilder::prefetchAround(OpBuilder &b, Value buffer,
                                   ArrayRef<Value> at, Value first,
                                   int64_t distance) {
  auto type = cast<MemRefType>(buffer.getType());
  Value below = maxI(b, sub(b, first, cIdx(b, distance)), cIdx(b, 0));
  Value above = minI(b, add(b, first, cIdx(b, distance)),
                     cIdx(b, type.getShape().back() - 1));
  for (Value column : {below, above}) {
    SmallVector<Value> idx(at);
    idx.push_back(column);
    memref::PrefetchOp::create(b, loc, buffer, idx, /*isWrite=*/false,
                               /*localityHint=*/3, /*isDataCache=*/true);
  }
}

Value KernelBuilder::permuteLanes(OpBuilder &b, Value row, Value offsets) {
  SmallVector<Value> elements;
  for (int64_t l = 0; l < opts.vectorWidth; ++l) {
    Value offset = vector::ExtractOp::create(b, loc, offsets, l);
    Value pos = arith::IndexCastOp::create(b, loc, b.getIndexType(), offset);
    elements.push_back(
        vector::ExtractOp::create(b, loc, row, ArrayRef<OpFoldResult>{pos}));
  }
  return vector::FromElementsOp::create(b, loc, vecF32, elements);
}

void KernelBuilder::buildBucketWindows() {
  if (!opts.permuteReads || op.getScoreMod().empty())
    return;
  int64_t w = opts.vectorWidth;
  auto build = [&](Value diagonal, Value table) {
    auto tableType = cast<MemRefType>(bufferOf(table).getType());
    int64_t n = tableType.getShape().back();
    if (!paddedTables.contains(diagonal) || windowsFor(diagonal, n))
      return;
    Value diag = bufferOf(diagonal);
    Type i32 = rw.getI32Type();
    Value leads = memref::DimOp::create(rw, loc, diag, 0);
    Value length = memref::DimOp::create(rw, loc, diag, 1);
    // Freed by the pipeline's ownership-based deallocation, like outBuf.
    auto dyn = ShapedType::kDynamic;
    Value start = memref::AllocOp::create(
        rw, loc, MemRefType::get({dyn, dyn}, i32), ValueRange{leads, length},
        ValueRange{}, rw.getI64IntegerAttr(64));
    // Windows [0, length - W + 1) read W buckets; the diagonals after them
    // are marked as gathered.
    Value windows = maxI(rw, sub(rw, length, cIdx(rw, w - 1)), cIdx(rw, 0));
    auto i32Const = [&](int64_t v) {
      return arith::ConstantIntOp::create(rw, loc, i32, v).getResult();
    };
    Value none = i32Const(-1), zero = i32Const(0), width = i32Const(w);
    Value lastStart = i32Const(n - w);
    forRange(rw, cIdx(rw, 0), leads, cIdx(rw, 1), [&](OpBuilder &ab, Value a) {
      forRange(
          ab, cIdx(ab, 0), windows, cIdx(ab, 1), [&](OpBuilder &db, Value d) {
            // The window starts at the lower of the end lanes (buckets run
            // one way along the lanes), moved left so that it ends inside
            // the row; the W buckets fit when each is less than W columns
            // past its start.
            Value columns = loadBuckets32(db, diag, ValueRange{a, d});
            Value first = vector::ExtractOp::create(db, loc, columns, 0);
            Value last = vector::ExtractOp::create(db, loc, columns, w - 1);
            Value lowest = arith::MinSIOp::create(db, loc, first, last);
            Value inRow = arith::MinSIOp::create(db, loc, lowest, lastStart);
            Value lo = arith::MaxSIOp::create(db, loc, inRow, zero);
            Value offsets =
                arith::SubIOp::create(db, loc, columns, bcast(db, lo));
            Value outside = arith::CmpIOp::create(
                db, loc, arith::CmpIPredicate::uge, offsets, bcast(db, width));
            Value anyOutside = vector::ReductionOp::create(
                db, loc, vector::CombiningKind::OR, outside);
            Value entry =
                arith::SelectOp::create(db, loc, anyOutside, none, lo);
            memref::StoreOp::create(db, loc, entry, start, ValueRange{a, d});
          });
      forRange(ab, windows, length, cIdx(ab, 1), [&](OpBuilder &db, Value d) {
        memref::StoreOp::create(db, loc, none, start, ValueRange{a, d});
      });
    });
    bucketWindows.push_back({diagonal, n, start});
  };
  for (RowRead &r : rowReads)
    build(r.diagonal, r.read.getTensor());
  for (Operation &inner : op.getScoreMod().front()) {
    auto read = dyn_cast<tensor::ExtractOp>(inner);
    if (!read)
      continue;
    tensor::ExtractOp bucket = bucketRead(read.getIndices().back());
    if (bucket && bucket.getIndices().size() == 2 &&
        windowReadable(cast<MemRefType>(bufferOf(read.getTensor()).getType())))
      build(bucket.getTensor(), read.getTensor());
  }
}

Value KernelBuilder::windowRead(OpBuilder &b, Value buffer, ArrayRef<Value> at,
                                const BucketWindows &windows, Value lead,
                                Value diag, int64_t chunk, Value mask,
                                Value &startColumn) {
  Value first =
      memref::LoadOp::create(b, loc, windows.start, ValueRange{lead, diag});
  Value fits = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sge, first,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
  startColumn = arith::IndexCastOp::create(b, loc, b.getIndexType(), first);
  auto ifOp = scf::IfOp::create(
      b, loc, fits,
      [&](OpBuilder &tb, Location) {
        // The lanes' offsets in the window, computed as vector lanes (not
        // loaded: LLVM would read each lane on its own and not see the
        // permute).
        Value columns = loadBuckets32(tb, bufferOf(windows.diagonal),
                                      ValueRange{lead, diag});
        Value offsets =
            arith::SubIOp::create(tb, loc, columns, bcast(tb, first));
        SmallVector<Value> start(at);
        start.push_back(startColumn);
        Value row = vector::LoadOp::create(tb, loc, vecF32, buffer, start);
        scf::YieldOp::create(tb, loc, permuteLanes(tb, row, offsets));
      },
      [&](OpBuilder &eb, Location) {
        SmallVector<Value> indices(at);
        indices.push_back(loadBuckets(eb, bufferOf(windows.diagonal),
                                      ValueRange{lead, diag}));
        scf::YieldOp::create(eb, loc, gather(eb, buffer, indices, chunk, mask));
      });
  return ifOp.getResult(0);
}

void KernelBuilder::findRowReads() {
  if (!opts.permuteReads || op.getScoreMod().empty())
    return;
  Region &region = op.getScoreMod();
  Block &block = region.front();
  Value bArg = block.getArgument(1), hArg = block.getArgument(2),
        iArg = block.getArgument(3), jArg = block.getArgument(4);
  auto uniform = [&](Value v) {
    return v == bArg || v == hArg || !region.isAncestor(v.getParentRegion()) ||
           v.getDefiningOp<arith::ConstantOp>();
  };
  for (Operation &inner : block) {
    auto read = dyn_cast<tensor::ExtractOp>(inner);
    if (!read)
      continue;
    int64_t rank = read.getTensor().getType().getRank();
    if (rank < 2 ||
        !windowReadable(cast<MemRefType>(bufferOf(read.getTensor()).getType())))
      continue;
    ValueRange idx = read.getIndices();
    if (!llvm::all_of(idx.drop_back(2), uniform))
      continue;
    Value row = idx[rank - 2], rowOffset;
    if (row != iArg) {
      auto s = row.getDefiningOp<arith::SubIOp>();
      if (!s || s.getLhs() != iArg || !uniform(s.getRhs()))
        continue;
      rowOffset = s.getRhs();
    }
    tensor::ExtractOp bucket = bucketRead(idx.back());
    if (!bucket || !uniform(bucket.getIndices()[0]) ||
        !paddedTables.contains(bucket.getTensor()))
      continue;
    auto addOp = bucket.getIndices()[1].getDefiningOp<arith::AddIOp>();
    if (!addOp || !uniform(addOp.getRhs()))
      continue;
    auto diff = addOp.getLhs().getDefiningOp<arith::SubIOp>();
    if (!diff || diff.getLhs() != iArg || diff.getRhs() != jArg)
      continue;
    bufferOf(bucket.getTensor());
    rowReads.push_back({read, SmallVector<Value>(idx.drop_back(2)), rowOffset,
                        bucket.getTensor(), bucket.getIndices()[0],
                        addOp.getRhs(), Value()});
  }
}

Value KernelBuilder::uniformScalar(OpBuilder &b, Value v) {
  Block &block = op.getScoreMod().front();
  if (v == block.getArgument(1))
    return bIdx;
  if (v == block.getArgument(2))
    return hIdx;
  if (!op.getScoreMod().isAncestor(v.getParentRegion()))
    return v;
  if (Value t = tileInvariants.lookup(v))
    return t;
  return b.clone(*v.getDefiningOp())->getResult(0);
}

void KernelBuilder::buildRowReads(OpBuilder &b, int64_t numChunks, Value k0,
                                  Value keys) {
  int64_t w = opts.vectorWidth;
  auto maskType = VectorType::get({w}, b.getI1Type());
  Value allLanes =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType, true));
  // Loops over key vectors and row vectors (not unrolled: the code is W
  // row reads and one transpose).
  forRange(b, cIdx(b, 0), keys, cIdx(b, w), [&](OpBuilder &gb, Value g) {
    Value jLast = add(gb, add(gb, k0, g), cIdx(gb, w - 1));
    Value lastRow = sub(gb, tq, cIdx(gb, 1));
    for (RowRead &r : rowReads) {
      Value table = bufferOf(r.read.getTensor());
      const BucketWindows *windows = windowsFor(
          r.diagonal, cast<MemRefType>(table.getType()).getShape().back());
      SmallVector<Value> lead;
      for (Value v : r.lead)
        lead.push_back(uniformScalar(gb, v));
      Value diagLead = uniformScalar(gb, r.diagLead);
      Value shift = uniformScalar(gb, r.shift);
      Value rowOffset = r.rowOffset ? uniformScalar(gb, r.rowOffset) : Value();
      forRange(gb, cIdx(gb, 0), cIdx(gb, numChunks * w), cIdx(gb, w),
               [&](OpBuilder &cb, Value c0) {
                 // Row l's values at keys jLast - m, m = 0 .. W-1: its
                 // buckets are the diagonals from (row, jLast) up.
                 SmallVector<Value> rows;
                 for (int64_t l = 0; l < w; ++l) {
                   Value pos = add(cb, qPos0,
                                   minI(cb, add(cb, c0, cIdx(cb, l)), lastRow));
                   Value start = add(cb, sub(cb, pos, jLast), shift);
                   SmallVector<Value> at(lead);
                   at.push_back(rowOffset ? sub(cb, pos, rowOffset) : pos);
                   Value first;
                   rows.push_back(windowRead(cb, table, at, *windows, diagLead,
                                             start, 0, allLanes, first));
                   // The row's window `rowReadPrefetch` key vectors on
                   // (it moves by at most one column per key).
                   if (opts.rowReadPrefetch > 0)
                     prefetchAround(cb, table, at, first,
                                    opts.rowReadPrefetch * w);
                 }
                 SmallVector<Value> columns =
                     buildRegisterTranspose(cb, loc, rows);
                 for (int64_t m = 0; m < w; ++m)
                   vector::StoreOp::create(
                       cb, loc, columns[m], r.scratch,
                       ValueRange{add(cb, g, cIdx(cb, w - 1 - m)), c0});
               });
    }
  });
}

Value KernelBuilder::lanesVector(OpBuilder &b, Lanes &lanes, Value v) {
  if (!lanes.isVarying(v))
    return bcast(b, lanes.scalarOf(v));
  auto it = lanes.vector.find(v);
  if (it != lanes.vector.end())
    return it->second;
  // base + clamped lane offset.
  Value vec = arith::AddIOp::create(b, loc, bcast(b, lanes.base[v]),
                                    clampedIota[lanes.chunk]);
  lanes.vector[v] = vec;
  return vec;
}

Operation *KernelBuilder::cloneScalar(OpBuilder &b, Operation &inner,
                                      function_ref<Value(Value)> scalarOf) {
  if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
    SmallVector<Value> idx;
    for (Value v : extract.getIndices())
      idx.push_back(scalarOf(v));
    return memref::LoadOp::create(b, loc, bufferOf(extract.getTensor()), idx);
  }
  if (auto dim = dyn_cast<tensor::DimOp>(inner))
    return memref::DimOp::create(b, loc, bufferOf(dim.getSource()),
                                 scalarOf(dim.getIndex()));
  IRMapping map;
  for (Value v : inner.getOperands())
    map.map(v, scalarOf(v));
  return b.clone(inner, map);
}

void KernelBuilder::hoistTileInvariants(OpBuilder &b) {
  tileInvariants.clear();
  Region &region = op.getScoreMod();
  if (region.empty())
    return;
  Block &block = region.front();
  DenseMap<Value, Value> known = {{block.getArgument(1), bIdx},
                                  {block.getArgument(2), hIdx}};
  auto scalarOf = [&](Value v) -> Value {
    if (!region.isAncestor(v.getParentRegion()))
      return v;
    return known.lookup(v);
  };
  for (Operation &inner : block.without_terminator()) {
    if (!isPure(&inner) || !llvm::all_of(inner.getOperands(), [&](Value v) {
          return static_cast<bool>(scalarOf(v));
        }))
      continue;
    Operation *clone = cloneScalar(b, inner, scalarOf);
    for (auto [from, to] : llvm::zip(inner.getResults(), clone->getResults())) {
      known[from] = to;
      tileInvariants[from] = to;
    }
  }
}

KernelBuilder::Lanes KernelBuilder::initialLanes(OpBuilder &b, int64_t chunk) {
  Block &block = op.getScoreMod().front();
  Lanes lanes;
  lanes.chunk = chunk;
  lanes.region = &op.getScoreMod();
  lanes.scalar[block.getArgument(1)] = bIdx;
  lanes.scalar[block.getArgument(2)] = hIdx;
  lanes.base[block.getArgument(3)] =
      add(b, qPos0, cIdx(b, chunk * opts.vectorWidth));
  for (auto [from, to] : tileInvariants)
    lanes.scalar[from] = to;
  for (auto [from, to] : tileScalars)
    lanes.scalar[from] = to;
  return lanes;
}

void KernelBuilder::evaluate(OpBuilder &b, Lanes &lanes, Operation &inner) {
  int64_t w = opts.vectorWidth;
  auto scalarOf = [&](Value v) { return lanes.scalarOf(v); };
  auto uniform = [&](Value v) { return static_cast<bool>(scalarOf(v)); };
  bool varying =
      llvm::any_of(inner.getOperands(), [&](Value v) { return !uniform(v); });
  if (!varying) {
    // Uniform across lanes: scalars (per key, once for all row vectors;
    // what depends on the key neither is computed once per tile, see
    // hoistTileInvariants).
    // Shared only when it depends on the key and on values of the whole
    // tile, not on the row vector (a uniform `i floordiv c` does).
    Block &block = op.getScoreMod().front();
    bool perKey =
        sharePerKey && llvm::all_of(inner.getOperands(), [&](Value v) {
          return !lanes.region->isAncestor(v.getParentRegion()) ||
                 v == block.getArgument(1) || v == block.getArgument(2) ||
                 v == block.getArgument(4) || tileInvariants.count(v) ||
                 tileScalars.count(v) || perKeyScalars.count(v);
        });
    if (perKey && inner.getNumResults() == 1)
      if (Value known = perKeyScalars.lookup(inner.getResult(0))) {
        lanes.scalar[inner.getResult(0)] = known;
        return;
      }
    Operation *clone = cloneScalar(b, inner, scalarOf);
    for (auto [from, to] : llvm::zip(inner.getResults(), clone->getResults())) {
      lanes.scalar[from] = to;
      if (perKey)
        perKeyScalars[from] = to;
    }
    // A key's row of a table read once per key (a uniform tile's p2c): when
    // its rows are a cache line or more apart, the row `windowReadPrefetch`
    // keys on is prefetched, as for the windowed reads below.
    auto load = dyn_cast<memref::LoadOp>(clone);
    auto wideRows = [&](MemRefType type) {
      int64_t columns = type.getShape().back();
      return ShapedType::isDynamic(columns) ||
             columns * type.getElementTypeBitWidth() >= kCacheLineBytes * 8;
    };
    if (load && perKey && opts.windowReadPrefetch > 0 &&
        load.getIndices().size() >= 2 && wideRows(load.getMemRefType())) {
      auto extract = cast<tensor::ExtractOp>(inner);
      int64_t rank = load.getIndices().size();
      if (dependsOn(extract.getIndices()[rank - 2], block.getArgument(4)))
        memref::PrefetchOp::create(
            b, loc, load.getMemRef(),
            rowsAhead(b, load.getMemRef(), llvm::to_vector(load.getIndices()),
                      opts.windowReadPrefetch),
            /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
    }
    return;
  }

  // The window row of the query rows, `i floordiv c`: uniform when c is a
  // multiple of the vector width and the tiles' rows start at multiples of
  // it (no q_offset), i.e. every vector's rows lie in one block of c. Then a
  // window table's index (hoistWindowTerms) is lane-affine and read as one
  // vector.
  if (auto div = dyn_cast<arith::FloorDivSIOp>(inner);
      div && rowsAligned &&
      div.getLhs() == op.getScoreMod().front().getArgument(3)) {
    APInt c;
    if (matchPattern(div.getRhs(), m_ConstantInt(&c)) &&
        c.isStrictlyPositive() && c.getZExtValue() % w == 0) {
      lanes.scalar[div.getResult()] = arith::FloorDivSIOp::create(
          b, loc, lanes.base[div.getLhs()], scalarOf(div.getRhs()));
      return;
    }
  }

  // Lane-affine index arithmetic: base ± uniform.
  if (isa<arith::AddIOp, arith::SubIOp>(inner) &&
      inner.getResult(0).getType().isIndex()) {
    Value x = inner.getOperand(0), y = inner.getOperand(1);
    bool isAdd = isa<arith::AddIOp>(inner);
    if (lanes.base.count(x) && uniform(y)) {
      Value base = isAdd ? add(b, lanes.base[x], scalarOf(y))
                         : sub(b, lanes.base[x], scalarOf(y));
      lanes.base[inner.getResult(0)] = base;
      return;
    }
    if (isAdd && lanes.base.count(y) && uniform(x)) {
      lanes.base[inner.getResult(0)] = add(b, lanes.base[y], scalarOf(x));
      return;
    }
  }

  if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
    if (scratchKey)
      for (RowRead &r : rowReads)
        if (r.read == extract) {
          lanes.vector[inner.getResult(0)] = vector::LoadOp::create(
              b, loc, vecF32, r.scratch,
              ValueRange{scratchKey, cIdx(b, lanes.chunk * w)});
          return;
        }
    Value buffer = bufferOf(extract.getTensor());
    auto bufferType = cast<MemRefType>(buffer.getType());
    auto elemVec = VectorType::get({w}, bufferType.getElementType());
    ValueRange indices = extract.getIndices();
    bool innerOnly = true;
    for (Value v : indices.drop_back())
      innerOnly &= uniform(v);
    Value last = indices.back();
    SmallVector<Value> at;
    for (Value v : indices.drop_back())
      at.push_back(innerOnly ? scalarOf(v) : cIdx(b, 0));
    if (innerOnly && lanes.base.count(last)) {
      at.push_back(lanes.base[last]);
      Value read;
      if (paddedTables.count(extract.getTensor())) {
        read = vector::LoadOp::create(b, loc, elemVec, buffer, at);
      } else {
        Value pad = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(bufferType.getElementType()));
        read = vector::TransferReadOp::create(b, loc, elemVec, buffer, at, pad,
                                              ArrayRef<bool>{false});
      }
      lanes.vector[inner.getResult(0)] = read;
      return;
    }
    // A row at bucket columns read from a diagonal table (W consecutive
    // diagonals).
    if (innerOnly && windowReadable(bufferType)) {
      if (tensor::ExtractOp bucket = bucketRead(last)) {
        // Through the diagonal's windows when the buckets are a contiguous
        // run of it (lane-affine diagonals, as every Toeplitz table's
        // are); else the gather below.
        ValueRange diagonalAt = bucket.getIndices();
        const BucketWindows *windows =
            windowsFor(bucket.getTensor(), bufferType.getShape().back());
        if (windows && uniform(diagonalAt.front()) &&
            lanes.base.count(diagonalAt.back())) {
          Value first;
          lanes.vector[inner.getResult(0)] = windowRead(
              b, buffer, at, *windows, scalarOf(diagonalAt.front()),
              lanes.base[diagonalAt.back()], lanes.chunk, Value(), first);
          // The read `windowReadPrefetch` keys on, if its row depends on the
          // key (a key's row of p2c): the row as many rows on, its window at
          // most as many columns away.
          int64_t d = opts.windowReadPrefetch;
          Value row = indices[bufferType.getRank() - 2];
          if (d > 0 && !inUniformTile &&
              dependsOn(row, op.getScoreMod().front().getArgument(4)))
            prefetchAround(b, buffer, rowsAhead(b, buffer, at, d), first, d);
          return;
        }
      }
    }
    SmallVector<Value> idx;
    for (Value v : indices)
      idx.push_back(uniform(v) ? scalarOf(v) : lanesVector(b, lanes, v));
    lanes.vector[inner.getResult(0)] = gather(b, buffer, idx, lanes.chunk);
    return;
  }

  bool elementwise =
      inner.hasTrait<OpTrait::Elementwise>() && inner.getNumResults() == 1 &&
      isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
  if (elementwise) {
    SmallVector<Value> operands;
    for (Value v : inner.getOperands())
      operands.push_back(lanesVector(b, lanes, v));
    OperationState state(loc, inner.getName());
    state.addOperands(operands);
    state.addTypes(VectorType::get({w}, inner.getResult(0).getType()));
    state.addAttributes(inner.getAttrs());
    Operation *vop = b.create(state);
    lanes.vector[inner.getResult(0)] = vop->getResult(0);
    return;
  }

  // Anything else: one scalar copy per lane (the lanes of padding rows
  // repeat the last row of the tile, so every copy sees real positions).
  SmallVector<SmallVector<Value>> perLane(inner.getNumResults());
  for (int64_t lane = 0; lane < w; ++lane) {
    IRMapping map;
    for (Value v : inner.getOperands()) {
      if (uniform(v))
        map.map(v, scalarOf(v));
      else
        map.map(v, vector::ExtractOp::create(b, loc, lanesVector(b, lanes, v),
                                             lane));
    }
    Operation *clone = b.clone(inner, map);
    for (unsigned r = 0; r < inner.getNumResults(); ++r)
      perLane[r].push_back(clone->getResult(r));
  }
  for (unsigned r = 0; r < inner.getNumResults(); ++r)
    lanes.vector[inner.getResult(r)] = vector::FromElementsOp::create(
        b, loc, VectorType::get({w}, inner.getResult(r).getType()), perLane[r]);
}

void KernelBuilder::hoistKeyTileInvariants(OpBuilder &b, int64_t numChunks) {
  keyTileLanes.clear();
  if (op.getScoreMod().empty())
    return;
  Block &block = op.getScoreMod().front();
  for (int64_t c = 0; c < numChunks; ++c) {
    Lanes lanes = initialLanes(b, c);
    for (Operation &inner : block.without_terminator()) {
      if (keyDependent.contains(&inner))
        continue;
      Value first = inner.getResult(0);
      if (lanes.scalar.count(first) || lanes.vector.count(first) ||
          lanes.base.count(first))
        continue;
      evaluate(b, lanes, inner);
      // A scalar of the tile's values alone (a cast of a bucket) is the
      // same for every row vector: a tile scalar, which the per-key values
      // may use (and the next row vectors reuse).
      bool ofTile = llvm::all_of(inner.getOperands(), [&](Value v) {
        return !op.getScoreMod().isAncestor(v.getParentRegion()) ||
               v == block.getArgument(1) || v == block.getArgument(2) ||
               tileInvariants.count(v) || tileScalars.count(v);
      });
      if (ofTile && inner.getNumResults() == 1)
        if (Value scalar = lanes.scalarOf(first))
          tileScalars[first] = scalar;
    }
    keyTileLanes.push_back(std::move(lanes));
  }
}

void KernelBuilder::buildUniformRuns() {
  SmallVector<Value> tables;
  for (Value table : uniformTables)
    tables.push_back(bufferOf(table));
  Value length = memref::DimOp::create(rw, loc, tables.front(), 1);
  // Freed by the pipeline's ownership-based deallocation, like outBuf.
  runEndBuf = memref::AllocOp::create(
      rw, loc, MemRefType::get({ShapedType::kDynamic}, rw.getIndexType()),
      ValueRange{length}, ValueRange{}, rw.getI64IntegerAttr(64));
  // runEnd[r] = runEnd[r + 1] when every table holds the same value at r and
  // r + 1, else r; filled from the end.
  Value last = sub(rw, length, cIdx(rw, 1));
  memref::StoreOp::create(rw, loc, last, runEndBuf, last);
  scf::ForOp::create(
      rw, loc, cIdx(rw, 1), length, cIdx(rw, 1), ValueRange{last},
      [&](OpBuilder &b, Location, Value t, ValueRange end) {
        Value r = sub(b, last, t);
        Value next = add(b, r, cIdx(b, 1));
        Value same;
        for (Value table : tables) {
          Value x =
              memref::LoadOp::create(b, loc, table, ValueRange{cIdx(b, 0), r});
          Value y = memref::LoadOp::create(b, loc, table,
                                           ValueRange{cIdx(b, 0), next});
          Value eq =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
          same =
              same ? arith::AndIOp::create(b, loc, same, eq).getResult() : eq;
        }
        Value runEnd = arith::SelectOp::create(b, loc, same, end.front(), r);
        memref::StoreOp::create(b, loc, runEnd, runEndBuf, r);
        scf::YieldOp::create(b, loc, runEnd);
      });
}

/// Bias, score_mod and nothing else for the query rows of vector `chunk`
/// against key `key`.
Value KernelBuilder::vectorizeScore(OpBuilder &b, Value s, Value key,
                                    int64_t chunk) {
  int64_t w = opts.vectorWidth;
  // Dense bias: bias[b?, h?, row, key] gathered along rows.
  if (biasBuf) {
    Value rowBase = add(b, q0, cIdx(b, chunk * w));
    auto biasType = cast<MemRefType>(biasBuf.getType());
    int64_t rank = biasType.getRank();
    Value full[] = {bIdx, hIdx, rowBase, key};
    SmallVector<Value> at;
    for (int64_t d = 0; d < rank; ++d)
      at.push_back(biasType.getDimSize(d) == 1 ? cIdx(b, 0)
                                               : full[4 - rank + d]);
    Value term;
    if (biasType.getDimSize(rank - 2) == 1) {
      term = bcast(b, loadF32(b, biasBuf, at));
    } else {
      // Rows are Lk elements apart: gathered (clamped rows, masked lanes).
      at[rank - 2] =
          arith::AddIOp::create(b, loc, clampedIota[chunk], bcast(b, rowBase));
      term = castFloat(b, loc, gather(b, biasBuf, at, chunk), f32);
    }
    s = arith::AddFOp::create(b, loc, s, term);
  }
  Region &region = op.getScoreMod();
  if (region.empty())
    return s;

  Block &block = region.front();
  Lanes lanes =
      keyTileLanes.empty() ? initialLanes(b, chunk) : keyTileLanes[chunk];
  lanes.vector[block.getArgument(0)] = s;
  lanes.scalar[block.getArgument(4)] = key;
  // The row vectors of one key share its uniform values (computed for the
  // first).
  if (key != perKeyKey) {
    perKeyScalars.clear();
    perKeyKey = key;
  }
  sharePerKey = true;
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumResults() != 0) {
      Value first = inner.getResult(0);
      if (lanes.scalar.count(first) || lanes.vector.count(first) ||
          lanes.base.count(first))
        continue; // computed per tile or per key tile
    }
    evaluate(b, lanes, inner);
  }
  sharePerKey = false;
  auto yield = cast<YieldOp>(block.getTerminator());
  return lanesVector(b, lanes, yield.getValues().front());
}
