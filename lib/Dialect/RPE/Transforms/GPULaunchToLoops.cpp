//===- GPULaunchToLoops.cpp - run one-thread-block launches on the CPU ----===//
//
// A gpu.launch whose blocks have one thread runs, block after block, as a
// loop nest on the host: thread ids are 0, barriers have nothing to wait
// for, workgroup memory is a host buffer reused by every block, and device
// allocations and copies become host ones. The kernel code itself is
// unchanged, so the CPU runs exactly what the GPU would (one thread per
// block): the NVPTX pipeline's kernels can be tested without a GPU.
//
//===----------------------------------------------------------------------===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace rpe {
#define GEN_PASS_DEF_RPEGPULAUNCHTOLOOPSPASS
#include "rpe/Dialect/RPE/Transforms/Passes.h.inc"
} // namespace rpe
} // namespace mlir

using namespace mlir;

namespace {

/// `type` in the default memory space.
MemRefType hostType(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

LogicalResult launchToLoops(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitOpError()
           << "rpe-gpu-launch-to-loops: asynchronous launches are not "
              "supported";
  gpu::KernelDim3 blockSize = launch.getBlockSizeOperandValues();
  for (Value size : {blockSize.x, blockSize.y, blockSize.z})
    if (!matchPattern(size, m_One()))
      return launch.emitOpError()
             << "rpe-gpu-launch-to-loops: blocks must have one thread";
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  IRMapping map;
  SmallVector<Value> buffers;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    Value buffer = memref::AllocOp::create(
        b, loc, hostType(cast<MemRefType>(attribution.getType())));
    buffers.push_back(buffer);
    map.map(attribution, buffer);
  }
  for (BlockArgument attribution : launch.getPrivateAttributions())
    map.map(attribution,
            memref::AllocaOp::create(
                b, loc, hostType(cast<MemRefType>(attribution.getType()))));
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 ids = launch.getBlockIds();
  gpu::KernelDim3 threads = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  for (Value id : {threads.x, threads.y, threads.z})
    map.map(id, zero);
  for (Value size : {blockArgs.x, blockArgs.y, blockArgs.z})
    map.map(size, one);
  map.map(gridArgs.x, grid.x);
  map.map(gridArgs.y, grid.y);
  map.map(gridArgs.z, grid.z);
  Block &body = launch.getBody().front();
  scf::buildLoopNest(
      b, loc, ValueRange{zero, zero, zero}, ValueRange{grid.z, grid.y, grid.x},
      ValueRange{one, one, one}, [&](OpBuilder &nb, Location, ValueRange ivs) {
        map.map(ids.z, ivs[0]);
        map.map(ids.y, ivs[1]);
        map.map(ids.x, ivs[2]);
        for (Operation &op : body.without_terminator())
          nb.clone(op, map);
      });
  // Views of workgroup memory (memref.view / subview / cast of an
  // attribution) now view host buffers: their results lose the address
  // space too.
  SmallVector<Value> views(buffers);
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers())
      for (Value result : user->getResults())
        if (auto type = dyn_cast<MemRefType>(result.getType()))
          if (auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
                  type.getMemorySpace());
              space && space.getValue() == gpu::AddressSpace::Workgroup) {
            result.setType(hostType(type));
            views.push_back(result);
          }
  }
  for (Value buffer : buffers)
    memref::DeallocOp::create(b, loc, buffer);
  launch.erase();
  return success();
}

struct RPEGPULaunchToLoopsPass
    : rpe::impl::RPEGPULaunchToLoopsPassBase<RPEGPULaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(launchToLoops(launch)))
        return signalPassFailure();
    SmallVector<Operation *> rest;
    getOperation()->walk([&](Operation *op) {
      if (isa<gpu::BarrierOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        rest.push_back(op);
    });
    for (Operation *op : rest) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        if (alloc.getAsyncToken()) {
          alloc.emitOpError() << "rpe-gpu-launch-to-loops: asynchronous "
                                 "allocations are not supported";
          return signalPassFailure();
        }
        Value host = memref::AllocOp::create(b, loc, alloc.getType(),
                                             alloc.getDynamicSizes(),
                                             alloc.getSymbolOperands());
        alloc.getMemref().replaceAllUsesWith(host);
      } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        memref::DeallocOp::create(b, loc, dealloc.getMemref());
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        memref::CopyOp::create(b, loc, copy.getSrc(), copy.getDst());
      }
      if (op->getNumResults() && !op->use_empty()) {
        op->emitOpError() << "rpe-gpu-launch-to-loops: cannot replace the "
                             "async token";
        return signalPassFailure();
      }
      op->erase();
    }
  }
};

} // namespace
