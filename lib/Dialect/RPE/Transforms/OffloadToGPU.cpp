//===- OffloadToGPU.cpp - run a bufferized module's memory work on the GPU ===//
//
// After bufferization and linalg -> parallel loops, the host code of an rpe
// module still touches memory outside the attention kernels: loops from
// linalg ops (projections, diagonal tables, element-wise code), copies,
// allocations. This pass moves all of it to the device:
//   - every host scf.parallel becomes a gpu.launch with one thread per
//     iteration (linearized, `block-size` threads per block);
//   - a host loop nest that touches memory and has no parallel dimension
//     runs in a single-thread launch;
//   - memref.copy becomes such a launch too;
//   - memref.alloc / dealloc become gpu.alloc / dealloc;
//   - constant globals that kernels read are copied to device memory.
// Host code that would still load or store device memory, and kernels that
// would read host stack memory, are errors.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/CheckedOptionsPass.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Utils/BufferUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <functional>

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEGPUOFFLOADPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;
using namespace mlir::rpe;

namespace {

bool isInsideKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() ||
         op->getParentOfType<gpu::GPUModuleOp>();
}

/// Whether `v` is memory the host can access: its stack, or a constant
/// global (function arguments and heap buffers are device memory).
bool isHostMemory(Value v) {
  return isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(
      bufferRoot(v).getDefiningOp());
}

bool touchesMemory(Operation *op) {
  bool touches = false;
  op->walk([&](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return WalkResult::advance();
    if (effects.hasEffect<MemoryEffects::Read>() ||
        effects.hasEffect<MemoryEffects::Write>()) {
      touches = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return touches;
}

/// Replaces `op` (an scf.parallel without reductions, or any op when
/// `sizes` is empty: one thread) by a gpu.launch that runs `body` once per
/// point of the iteration space `sizes` (trip counts), innermost dimension
/// fastest. `body` gets the launch builder and the point's indices.
void buildLinearLaunch(
    OpBuilder &b, Location loc, ArrayRef<Value> sizes, int64_t blockSize,
    function_ref<void(OpBuilder &, Location, ArrayRef<Value>)> body) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value total = one;
  for (Value s : sizes)
    total = arith::MulIOp::create(b, loc, total, s);
  Value threads =
      arith::ConstantIndexOp::create(b, loc, sizes.empty() ? 1 : blockSize);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  // An empty grid is not a valid launch.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, total, zero);
  auto guard = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(guard.thenBlock());
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, total);
  auto ifIn = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifIn.thenBlock());
  SmallVector<Value> point(sizes.size());
  Value rest = linear;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    point[d] = arith::RemUIOp::create(b, loc, rest, sizes[d]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
  }
  body(b, loc, point);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
}

struct RPEGPUOffloadPass
    : rpe::CheckedOptionsPass<
          rpe::impl::RPEGPUOffloadPassBase<RPEGPUOffloadPass>> {
  using CheckedOptionsPass::CheckedOptionsPass;

  LogicalResult offloadLoops(func::FuncOp func) {
    SmallVector<Operation *> work;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<scf::ParallelOp, memref::CopyOp>(op)) {
        work.push_back(op);
        return WalkResult::skip();
      }
      // Single elements of device memory (0-d linalg ops, scalar reads).
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (!isHostMemory(load.getMemref()))
          work.push_back(op);
        return WalkResult::advance();
      }
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        if (!isHostMemory(store.getMemref()))
          work.push_back(op);
        return WalkResult::advance();
      }
      // A sequential nest (a linalg op without parallel dimensions) that
      // only computes on memory: one thread.
      if (isa<scf::ForOp>(op) && touchesMemory(op)) {
        bool hostWork = false;
        op->walk([&](Operation *nested) {
          if (isa<gpu::LaunchOp, CallOpInterface>(nested))
            hostWork = true;
        });
        if (!hostWork) {
          work.push_back(op);
          return WalkResult::skip();
        }
      }
      return WalkResult::advance();
    });
    for (Operation *op : work) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto par = dyn_cast<scf::ParallelOp>(op)) {
        if (par.getNumReductions() != 0)
          return par.emitOpError()
                 << "rpe-gpu-offload: parallel loops with reductions are not "
                    "supported on the GPU";
        SmallVector<Value> sizes;
        for (auto [lb, ub, step] : llvm::zip(
                 par.getLowerBound(), par.getUpperBound(), par.getStep())) {
          Value span = arith::SubIOp::create(b, loc, ub, lb);
          sizes.push_back(arith::CeilDivUIOp::create(b, loc, span, step));
        }
        buildLinearLaunch(
            b, loc, sizes, blockSize,
            [&](OpBuilder &nb, Location nl, ArrayRef<Value> point) {
              IRMapping map;
              for (auto [iv, lb, step, p] :
                   llvm::zip(par.getInductionVars(), par.getLowerBound(),
                             par.getStep(), point))
                map.map(iv, arith::AddIOp::create(
                                nb, nl, lb,
                                arith::MulIOp::create(nb, nl, p, step)));
              for (Operation &inner : par.getBody()->without_terminator())
                nb.clone(inner, map);
            });
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        auto type = cast<MemRefType>(copy.getSource().getType());
        // Whole buffers: one device-to-device copy, no kernel.
        auto target = cast<MemRefType>(copy.getTarget().getType());
        if (type.getLayout().isIdentity() && target.getLayout().isIdentity()) {
          gpu::MemcpyOp::create(b, loc, Type(), ValueRange{}, copy.getTarget(),
                                copy.getSource());
          op->erase();
          continue;
        }
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          sizes.push_back(memref::DimOp::create(b, loc, copy.getSource(), d));
        buildLinearLaunch(
            b, loc, sizes, blockSize,
            [&](OpBuilder &nb, Location nl, ArrayRef<Value> point) {
              Value x = memref::LoadOp::create(nb, nl, copy.getSource(), point);
              memref::StoreOp::create(nb, nl, x, copy.getTarget(), point);
            });
      } else {
        // One thread. Results the host needs (a scalar read, a sequential
        // loop's values) go through device scalars copied to its stack.
        SmallVector<Value> devs;
        for (Type type : op->getResultTypes()) {
          if (!type.isIntOrIndexOrFloat())
            return op->emitOpError() << "rpe-gpu-offload: cannot return a "
                                     << type << " from device code to the host";
          devs.push_back(gpu::AllocOp::create(b, loc, MemRefType::get({}, type),
                                              Type(), ValueRange{},
                                              ValueRange{}, ValueRange{}, false)
                             .getMemref());
        }
        buildLinearLaunch(
            b, loc, {}, blockSize,
            [&](OpBuilder &nb, Location nl, ArrayRef<Value>) {
              Operation *clone = nb.clone(*op);
              for (auto [x, dev] : llvm::zip(clone->getResults(), devs))
                memref::StoreOp::create(nb, nl, x, dev, ValueRange{});
            });
        for (auto [result, dev] : llvm::zip(op->getResults(), devs)) {
          Value host =
              memref::AllocaOp::create(b, loc, cast<MemRefType>(dev.getType()));
          gpu::MemcpyOp::create(b, loc, Type(), ValueRange{}, host, dev);
          gpu::DeallocOp::create(b, loc, Type(), ValueRange{}, dev);
          result.replaceAllUsesWith(
              memref::LoadOp::create(b, loc, host, ValueRange{}).getResult());
        }
      }
      op->erase();
    }
    return success();
  }

  /// Heap buffers live on the device; constants kernels read are copied
  /// there once per call.
  void moveMemory(func::FuncOp func) {
    SmallVector<Operation *> host;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::DeallocOp, memref::GetGlobalOp>(op))
        host.push_back(op);
      return WalkResult::advance();
    });
    for (Operation *op : host) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto dev = gpu::AllocOp::create(
            b, loc, alloc.getType(), /*asyncToken=*/Type(), ValueRange{},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/false);
        alloc.replaceAllUsesWith(dev.getMemref());
        alloc.erase();
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                               dealloc.getMemref());
        dealloc.erase();
      } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        copyGlobalToDevice(func, global);
      }
    }
  }

  /// Host code reads a constant global in place only through loads outside
  /// kernels. Every other use takes a device copy: kernels, and calls and
  /// returns, whose callees and callers take device memory (function
  /// arguments and results are device buffers). The copy is freed before
  /// each return unless it (or a view of it) is returned: then it is the
  /// caller's, as any returned buffer.
  void copyGlobalToDevice(func::FuncOp func, memref::GetGlobalOp global) {
    auto readOnHost = [](Operation *user) {
      return !isInsideKernel(user) &&
             (isa<memref::LoadOp, memref::DimOp>(user) ||
              (user->getDialect() &&
               user->getDialect()->getNamespace() == "vector"));
    };
    // Views made on the host (reshapes, subviews) that kernels read, or
    // that are passed on, move to the device copy too.
    bool returned = false;
    std::function<bool(Value)> readOnDevice;
    auto needsDevice = [&](OpOperand &u) {
      Operation *user = u.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && !isInsideKernel(user) && view.getViewSource() == u.get())
        return readOnDevice(view.getViewDest());
      if (isa<func::ReturnOp>(user))
        returned = true;
      return !readOnHost(user);
    };
    readOnDevice = [&](Value v) {
      bool any = false;
      for (OpOperand &u : v.getUses())
        any |= needsDevice(u);
      return any;
    };
    Value host = global.getResult();
    if (!readOnDevice(host))
      return;
    Location loc = global.getLoc();
    OpBuilder b(global);
    b.setInsertionPointAfter(global);
    auto dev = gpu::AllocOp::create(b, loc, global.getType(), Type(),
                                    ValueRange{}, ValueRange{}, ValueRange{},
                                    /*hostShared=*/false);
    host.replaceUsesWithIf(dev.getMemref(), needsDevice);
    gpu::MemcpyOp::create(b, loc, Type(), ValueRange{}, dev.getMemref(), host);
    if (returned)
      return;
    func.walk([&](func::ReturnOp ret) {
      OpBuilder rb(ret);
      gpu::DeallocOp::create(rb, loc, Type(), ValueRange{}, dev.getMemref());
    });
  }

  /// Whether `value` (a buffer) or anything derived from it leaves its
  /// block: returned, yielded, or passed on through an op result.
  static bool escapes(Value value) {
    SmallVector<Value> work = {value};
    DenseSet<Value> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (isInsideKernel(user))
          continue;
        if (user->hasTrait<OpTrait::IsTerminator>())
          return true;
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            work.push_back(result);
      }
    }
    return false;
  }

  /// Whether result `index` of calls to `callee` is a buffer the callee
  /// allocated (the caller then owns it).
  static bool returnsFreshBuffer(func::FuncOp callee, unsigned index) {
    if (!callee || callee.isExternal())
      return false;
    bool fresh = true;
    callee.walk([&](func::ReturnOp ret) {
      Operation *def = bufferRoot(ret.getOperand(index)).getDefiningOp();
      if (!isa_and_nonnull<gpu::AllocOp, memref::AllocOp>(def))
        fresh = false;
    });
    return fresh;
  }

  /// Frees every device buffer this function owns and does not hand on, at
  /// the end of the block that made it (launches are synchronous).
  void freeBuffers(func::FuncOp func, SymbolTable &symbols) {
    SmallVector<Value> owned;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        owned.push_back(alloc.getMemref());
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        for (auto [i, result] : llvm::enumerate(call.getResults()))
          if (isa<MemRefType>(result.getType()) &&
              returnsFreshBuffer(callee, i))
            owned.push_back(result);
      }
      return WalkResult::advance();
    });
    for (Value buffer : owned) {
      if (escapes(buffer))
        continue;
      bool freed = llvm::any_of(buffer.getUsers(), [](Operation *user) {
        return isa<gpu::DeallocOp>(user);
      });
      if (freed)
        continue;
      Operation *end = buffer.getParentBlock()->getTerminator();
      OpBuilder b(end);
      gpu::DeallocOp::create(b, end->getLoc(), Type(), ValueRange{}, buffer);
    }
  }

  /// Host code must not load or store device memory, and kernels must not
  /// read the host's stack.
  LogicalResult verifyPlacement(func::FuncOp func) {
    WalkResult result = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        WalkResult inner = launch.getBody().walk([&](Operation *nested) {
          for (Value operand : nested->getOperands()) {
            if (!isa<MemRefType>(operand.getType()) ||
                launch.getBody().isAncestor(operand.getParentRegion()))
              continue;
            if (isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(
                    bufferRoot(operand).getDefiningOp())) {
              nested->emitOpError()
                  << "rpe-gpu-offload: a GPU kernel would read host memory";
              return WalkResult::interrupt();
            }
          }
          return WalkResult::advance();
        });
        return inner.wasInterrupted() ? WalkResult::interrupt()
                                      : WalkResult::skip();
      }
      if (!isa<memref::LoadOp, memref::StoreOp>(op) &&
          !(op->getDialect() && op->getDialect()->getNamespace() == "vector" &&
            touchesMemory(op)))
        return WalkResult::advance();
      for (Value operand : op->getOperands())
        if (isa<MemRefType>(operand.getType()) &&
            !isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(
                bufferRoot(operand).getDefiningOp())) {
          op->emitOpError()
              << "rpe-gpu-offload: host code would access device memory";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  LogicalResult checkOptions(
      function_ref<LogicalResult(const Twine &)> error) const override {
    if (blockSize <= 0 || blockSize > 1024)
      return error("rpe-gpu-offload: block-size must be in 1..1024, got " +
                   Twine(static_cast<int64_t>(blockSize)));
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptionsOnRun()))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      if (failed(offloadLoops(func)))
        return signalPassFailure();
      moveMemory(func);
      if (failed(verifyPlacement(func)))
        return signalPassFailure();
    }
    // One device module for all kernels (gpu-kernel-outlining makes one
    // per launch otherwise): one PTX / cubin per compiled module.
    auto kernels = FlatSymbolRefAttr::get(&getContext(), "rpe_kernels");
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (!launch.getModuleAttr())
        launch.setModuleAttr(kernels);
    });
    // After every function's allocations are device allocations, so that
    // calls can tell which results are fresh buffers.
    if (deallocate) {
      SymbolTable symbols(getOperation());
      for (func::FuncOp func : funcs)
        freeBuffers(func, symbols);
    }
  }
};

} // namespace
