//===- InsertShapeChecks.cpp - run-time argument size checks ----*- C++ -*-===//
//
// For every public function @F: a function @F_check(args) -> (code, a, b, c)
// that evaluates the size constraints of @F's ops on its arguments (see
// Passes.td). The constraints come from ShapeConstrainedOpInterface and from
// linalg indexing maps; sizes of intermediate values are traced back to the
// arguments with ReifyRankedShapedTypeOpInterface.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/IR/RPEOps.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEINSERTSHAPECHECKSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

using Kind = ShapeConstraint::Kind;

/// "file:line:col" of `loc`, or "".
std::string locationText(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

/// `text` with '%' doubled (the messages are printf formats).
std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

/// Builds @F_check for one function.
class CheckBuilder {
public:
  CheckBuilder(func::FuncOp func, func::FuncOp check)
      : func(func), check(check),
        b(OpBuilder::atBlockBegin(&check.getBody().front())),
        loc(func.getLoc()) {
    for (auto [from, to] : llvm::zip(func.getArguments(), check.getArguments()))
      mapping.map(from, to);
  }

  /// Adds the check of `c` raised by `op`; false if its sizes cannot be
  /// computed from the arguments.
  bool add(Operation *op, const ShapeConstraint &c);
  /// Returns (code, a, b, c) of the first failing check.
  void finish();
  ArrayRef<std::string> getMessages() const { return messages; }

private:
  /// The size as an index value in @F_check, or null.
  Value size(Value value, int64_t dim);
  Value index(Value value, unsigned depth = 0);
  std::string describe(const SizeRef &ref, bool withDim);
  Value i64(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  }
  Value cI64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }

  struct Check {
    Value bad;
    SmallVector<Value, 3> values;
  };

  func::FuncOp func, check;
  OpBuilder b;
  Location loc;
  IRMapping mapping;
  DenseMap<std::pair<Value, int64_t>, Value> sizes;
  SmallVector<Check> checks;
  SmallVector<std::string> messages;
  llvm::StringSet<> seen;
};

Value CheckBuilder::index(Value value, unsigned depth) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  if (depth > 16)
    return Value();
  Operation *def = value.getDefiningOp();
  if (!def || def->getParentOfType<func::FuncOp>() != func)
    return Value();
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    Value result = d ? size(dim.getSource(), *d) : Value();
    if (result)
      mapping.map(value, result);
    return result;
  }
  // Constants and pure index arithmetic on computable values.
  if (!isPure(def) || def->getNumRegions() != 0 || def->getNumResults() != 1 ||
      !isa<arith::ArithDialect>(def->getDialect()))
    return Value();
  for (Value operand : def->getOperands())
    if (!index(operand, depth + 1))
      return Value();
  Operation *clone = b.clone(*def, mapping);
  mapping.map(value, clone->getResult(0));
  return clone->getResult(0);
}

Value CheckBuilder::size(Value value, int64_t dim) {
  if (dim < 0)
    return index(value);
  auto key = std::make_pair(value, dim);
  auto it = sizes.find(key);
  if (it != sizes.end())
    return it->second;
  Value result;
  auto type = cast<ShapedType>(value.getType());
  if (!type.isDynamicDim(dim)) {
    result = arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  } else if (Value arg = mapping.lookupOrNull(value)) {
    result = tensor::DimOp::create(b, loc, arg, dim);
  } else if (auto reify =
                 value.getDefiningOp<ReifyRankedShapedTypeOpInterface>()) {
    // Reified in front of the op, translated into @F_check, then erased.
    struct Collect : OpBuilder::Listener {
      SetVector<Operation *> ops;
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        ops.insert(op);
      }
    } created;
    OpBuilder sb(reify, &created);
    ReifiedRankedShapedTypeDims shapes;
    if (succeeded(reify.reifyResultShapes(sb, shapes))) {
      OpFoldResult ofr = shapes[cast<OpResult>(value).getResultNumber()][dim];
      if (auto attr = dyn_cast<Attribute>(ofr)) {
        result = arith::ConstantIndexOp::create(
            b, loc, cast<IntegerAttr>(attr).getInt());
      } else if (auto dimOp = cast<Value>(ofr).getDefiningOp<tensor::DimOp>();
                 dimOp && created.ops.contains(dimOp)) {
        if (std::optional<int64_t> d = dimOp.getConstantIndex())
          result = size(dimOp.getSource(), *d);
      } else if (!created.ops.contains(cast<Value>(ofr).getDefiningOp())) {
        result = index(cast<Value>(ofr));
      }
    }
    for (Operation *op : llvm::reverse(created.ops))
      op->erase();
  }
  sizes[key] = result;
  return result;
}

std::string CheckBuilder::describe(const SizeRef &ref, bool withDim) {
  std::string s = escape(ref.name);
  if (auto arg = dyn_cast<BlockArgument>(ref.value))
    if (arg.getOwner() == &func.getBody().front())
      s += " (argument " + std::to_string(arg.getArgNumber()) + ")";
  if (withDim && ref.dim >= 0)
    s += " dim " + std::to_string(ref.dim);
  return s;
}

bool CheckBuilder::add(Operation *op, const ShapeConstraint &c) {
  Value x = size(c.size.value, c.size.dim);
  Value y;
  if (c.kind == Kind::Equal || c.kind == Kind::MultipleOf ||
      c.kind == Kind::ValuesInRange)
    y = size(c.other.value, c.other.dim);
  else
    y = arith::ConstantIndexOp::create(b, loc, c.constant);
  if (!x || !y)
    return false;
  if (x == y)
    return true; // the same size
  // Every piece but the placeholders is escaped (printf formats).
  std::string where = op->getName().getStringRef().str();
  std::string at = locationText(op->getLoc());
  if (!at.empty())
    where += " at " + escape(at);
  std::string what = escape(c.what);
  std::string subject = describe(c.size, /*withDim=*/false);
  if (c.size.dim >= 0)
    subject += ": dim " + std::to_string(c.size.dim);
  std::string message = where + ": " + subject;
  Check chk;
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r).getResult();
  };
  switch (c.kind) {
  case Kind::Equal:
    message +=
        " is %lld, expected %lld (= " + describe(c.other, /*withDim=*/true) +
        ", the " + what + ")";
    chk.bad = cmp(arith::CmpIPredicate::ne, x, y);
    break;
  case Kind::EqualConstant:
    message += " is %lld, expected %lld (" + what + ")";
    chk.bad = cmp(arith::CmpIPredicate::ne, x, y);
    break;
  case Kind::AtLeast:
    message += " is %lld, expected at least %lld (" + what + ")";
    chk.bad = cmp(arith::CmpIPredicate::slt, x, y);
    break;
  case Kind::MultipleOf:
  case Kind::MultipleOfConstant: {
    message += " is %lld, expected a positive multiple of %lld (";
    message +=
        c.kind == Kind::MultipleOf
            ? "= " + describe(c.other, /*withDim=*/true) + ", the " + what + ")"
            : what + ")";
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value divisorZero = cmp(arith::CmpIPredicate::eq, y, zero);
    Value safe = arith::SelectOp::create(b, loc, divisorZero, one, y);
    Value rem = arith::RemUIOp::create(b, loc, x, safe);
    chk.bad = arith::OrIOp::create(b, loc, divisorZero,
                                   cmp(arith::CmpIPredicate::ne, rem, zero));
    break;
  }
  case Kind::ValuesInRange: {
    // The first element outside [0, y]: (index, value), or index -1.
    message = where + ": " + describe(c.size, /*withDim=*/false) +
              "[%lld] is %lld, expected in [0, %lld] (= " +
              describe(c.other, /*withDim=*/true) + ", the " + what + ")";
    Value tensor = mapping.lookupOrNull(c.size.value);
    if (!tensor)
      return false;
    Value n = tensor::DimOp::create(b, loc, tensor, 0);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value hi = i64(y);
    auto loop = scf::ForOp::create(
        b, loc, zero, n, one, ValueRange{cI64(-1), cI64(0)},
        [&](OpBuilder &lb, Location l, Value i, ValueRange state) {
          Value v = tensor::ExtractOp::create(lb, l, tensor, i);
          v = arith::ExtSIOp::create(lb, l, lb.getI64Type(), v);
          Value zero64 =
              arith::ConstantOp::create(lb, l, lb.getI64IntegerAttr(0));
          Value out = arith::OrIOp::create(
              lb, l,
              arith::CmpIOp::create(lb, l, arith::CmpIPredicate::slt, v,
                                    zero64),
              arith::CmpIOp::create(lb, l, arith::CmpIPredicate::sgt, v, hi));
          Value none = arith::CmpIOp::create(
              lb, l, arith::CmpIPredicate::slt, state[0],
              arith::ConstantOp::create(lb, l, lb.getI64IntegerAttr(0)));
          Value take = arith::AndIOp::create(lb, l, out, none);
          Value i64v = arith::IndexCastOp::create(lb, l, lb.getI64Type(), i);
          scf::YieldOp::create(
              lb, l,
              ValueRange{arith::SelectOp::create(lb, l, take, i64v, state[0]),
                         arith::SelectOp::create(lb, l, take, v, state[1])});
        });
    chk.bad = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                    loop.getResult(0), cI64(0));
    chk.values = {loop.getResult(0), loop.getResult(1), hi};
    break;
  }
  }
  if (chk.values.empty())
    chk.values = {i64(x), i64(y), cI64(0)};
  if (!seen.insert(message).second)
    return true; // the same constraint from another op
  messages.push_back(message);
  checks.push_back(std::move(chk));
  return true;
}

void CheckBuilder::finish() {
  // The first failing check wins: fold from the last one.
  Value code = cI64(0);
  SmallVector<Value, 3> values = {cI64(0), cI64(0), cI64(0)};
  for (int64_t i = checks.size() - 1; i >= 0; --i) {
    Check &chk = checks[i];
    code = arith::SelectOp::create(b, loc, chk.bad, cI64(i + 1), code);
    for (int v = 0; v < 3; ++v)
      values[v] =
          arith::SelectOp::create(b, loc, chk.bad, chk.values[v], values[v]);
  }
  func::ReturnOp::create(b, loc,
                         ValueRange{code, values[0], values[1], values[2]});
}

/// Loop-size constraints of a linalg op: every operand dimension indexed by
/// the same loop has one size.
void linalgConstraints(linalg::LinalgOp op,
                       SmallVectorImpl<ShapeConstraint> &out) {
  DenseMap<unsigned, SizeRef> first;
  std::string name = op->getName().getStringRef().str();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::string operandName =
        "operand " + std::to_string(operand.getOperandNumber());
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto dimExpr = dyn_cast<AffineDimExpr>(expr);
      if (!dimExpr)
        continue;
      SizeRef ref{operand.get(), static_cast<int64_t>(d), operandName};
      auto [it, inserted] = first.try_emplace(dimExpr.getPosition(), ref);
      if (inserted)
        continue;
      const SizeRef &ref0 = it->second;
      if (!type.isDynamicDim(d) &&
          !cast<ShapedType>(ref0.value.getType()).isDynamicDim(ref0.dim))
        continue; // static: the linalg verifier checks it
      out.push_back({Kind::Equal, ref, ref0, 0,
                     "size of loop " + std::to_string(dimExpr.getPosition())});
    }
  }
}

struct RPEInsertShapeChecksPass
    : rpe::impl::RPEInsertShapeChecksPassBase<RPEInsertShapeChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() && !func->hasAttr(kCheckAttr) &&
          !func->hasAttr(kMessagesAttr))
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(addCheck(func, symbols)))
        return signalPassFailure();
  }

  LogicalResult addCheck(func::FuncOp func, SymbolTable &symbols) {
    std::string name = (func.getSymName() + "_check").str();
    if (symbols.lookup(name))
      return func.emitError()
             << "cannot add the shape check of @" << func.getSymName() << ": @"
             << name << " already exists";
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    Type i64 = b.getI64Type();
    auto check = func::FuncOp::create(
        b, func.getLoc(), name,
        b.getFunctionType(func.getArgumentTypes(), {i64, i64, i64, i64}));
    check.addEntryBlock();
    symbols.insert(check);
    CheckBuilder builder(func, check);
    func.walk([&](Operation *op) {
      SmallVector<ShapeConstraint> constraints;
      if (auto constrained = dyn_cast<ShapeConstrainedOpInterface>(op))
        constrained.getShapeConstraints(constraints);
      else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        linalgConstraints(linalgOp, constraints);
      for (const ShapeConstraint &c : constraints) {
        if (builder.add(op, c))
          ++numChecks;
        else
          ++numUnchecked;
      }
    });
    builder.finish();
    SmallVector<Attribute> messages;
    for (const std::string &m : builder.getMessages())
      messages.push_back(b.getStringAttr(m));
    check->setAttr(kMessagesAttr, b.getArrayAttr(messages));
    func->setAttr(kCheckAttr, FlatSymbolRefAttr::get(check));
    return success();
  }

  static constexpr StringLiteral kCheckAttr = "rpe.shape_check";
  static constexpr StringLiteral kMessagesAttr = "rpe.shape_check_messages";
};

} // namespace
