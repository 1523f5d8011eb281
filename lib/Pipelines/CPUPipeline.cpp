//===- CPUPipeline.cpp - rpe-cpu-pipeline -----------------------*- C++ -*-===//

#include "rpe/Conversion/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

/// The subtarget of the host's LLVM target for `cpu` ("" or "generic": the
/// baseline), or null if the target or the name is unknown (asking LLVM for
/// an unknown CPU prints a warning: the name is checked first).
static std::unique_ptr<llvm::MCSubtargetInfo> hostSubtarget(StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target ? target->createMCSubtargetInfo(triple, "", "") : nullptr);
  if (!subtarget || cpu.empty() || cpu == "generic")
    return subtarget;
  if (!subtarget->isCPUStringValid(cpu))
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, ""));
}

rpe::CPUVectorInfo mlir::rpe::getCPUVectorInfo(StringRef cpu) {
  llvm::StringMap<bool> features;
  if (cpu == "native") {
    features = llvm::sys::getHostCPUFeatures();
  } else {
    // An unknown name gets the baseline's features (rpe-compile and the
    // pipelines' option checks report it).
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget = hostSubtarget(cpu);
    if (!subtarget)
      subtarget = hostSubtarget("generic");
    if (subtarget)
      for (StringRef f : {"avx512f", "avx", "avx2", "fma"})
        features[f] = subtarget->checkFeatures("+" + f.str());
  }
  CPUVectorInfo info;
  info.width = features.lookup("avx512f") ? 16 : features.lookup("avx") ? 8 : 4;
  info.fma = features.lookup("fma");
  info.avx2 = features.lookup("avx2");
  return info;
}

bool mlir::rpe::isKnownCPU(StringRef cpu) {
  return cpu == "native" || hostSubtarget(cpu) != nullptr;
}

/// rpe-vectorize-contractions' options from the pipeline's (its cache
/// blocks keep their defaults).
static rpe::VectorizeContractionsOptions
resolveContractionOptions(const rpe::CPUPipelineOptions &options) {
  rpe::VectorizeAttentionOptions v = rpe::resolveVectorizeOptions(options);
  rpe::VectorizeContractionsOptions contractions;
  contractions.vectorWidth = v.vectorWidth;
  contractions.tileM = options.matmulTileM;
  // 16 registers without AVX-512: 6 × 2 accumulators; 32 with it: 6 × 4.
  contractions.tileN = options.matmulTileN > 0 ? options.matmulTileN
                                               : (v.vectorWidth >= 16 ? 4 : 2);
  contractions.packMinRows = options.matmulPackMinRows;
  contractions.useFMA = v.useFMA;
  return contractions;
}

LogicalResult mlir::rpe::verifyCPUPipelineOptions(
    const CPUPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> error) {
  // Unchecked, an unknown name would shape the kernel for the baseline (4
  // lanes, no FMA) without a word.
  if (!isKnownCPU(options.targetCPU))
    return error("rpe-cpu-pipeline: unknown target-cpu '" + options.targetCPU +
                 "' for " + llvm::sys::getDefaultTargetTriple() +
                 " (expected native, generic or an LLVM CPU name, e.g. "
                 "x86-64-v3)");
  if (options.tileQ <= 0 || options.tileK <= 0)
    return error("rpe-cpu-pipeline: tile-q and tile-k must be positive, got " +
                 Twine(options.tileQ) + " and " + Twine(options.tileK));
  if (options.numThreads > kMaxCPUThreads)
    return error("rpe-cpu-pipeline: num-threads must be at most " +
                 Twine(kMaxCPUThreads) + ", got " + Twine(options.numThreads));
  if (options.matmulTileM <= 0 || options.gpuTileK <= 0)
    return error("rpe-cpu-pipeline: matmul-tile-m and gpu-tile-k must be "
                 "positive, got " +
                 Twine(options.matmulTileM) + " and " +
                 Twine(options.gpuTileK));
  if (failed(checkRegisterTile(options.gpuThreadTileRows,
                               options.gpuThreadTileColumns, "rpe-cpu-pipeline",
                               "gpu-thread-tile-rows",
                               "gpu-thread-tile-columns", error)))
    return failure();
  // 0 means "the default" for these; a negative value would mean it too,
  // silently.
  for (auto [name, value] :
       {std::pair<StringRef, int64_t>{"vector-tile-q", options.vectorTileQ},
        {"key-block", options.keyBlock},
        {"value-block", options.valueBlock},
        {"matmul-tile-n", options.matmulTileN},
        {"matmul-pack-min-rows", options.matmulPackMinRows},
        {"outline-min-repeats", options.outlineMinRepeats}})
    if (value < 0)
      return error("rpe-cpu-pipeline: " + name + " must not be negative, got " +
                   Twine(value));
  int64_t width = options.vectorWidth;
  // rpe-vectorize-transposes needs two lanes at least.
  if (width != 0 && (width < 2 || width > 64 || !llvm::isPowerOf2_64(width)))
    return error("rpe-cpu-pipeline: vector-width must be 0 (from target-cpu) "
                 "or a power of two in 2..64, got " +
                 Twine(width));
  if (!options.vectorize)
    return success();
  // The vector kernels' own constraints (vector-tile-q a multiple of the
  // width, block sizes, decode-rows, the matmul register block), as their
  // passes name them.
  if (failed(checkVectorizeAttentionOptions(
          resolveVectorizeOptions(options), [&](const Twine &message) {
            return error("rpe-cpu-pipeline: rpe-vectorize-attention: " +
                         message);
          })))
    return failure();
  return checkVectorizeContractionsOptions(
      resolveContractionOptions(options), [&](const Twine &message) {
        return error("rpe-cpu-pipeline: rpe-vectorize-contractions: " +
                     message);
      });
}

rpe::VectorizeAttentionOptions
mlir::rpe::resolveVectorizeOptions(const CPUPipelineOptions &options) {
  CPUVectorInfo cpu = getCPUVectorInfo(options.targetCPU);
  VectorizeAttentionOptions v;
  v.vectorWidth = options.vectorWidth > 0 ? options.vectorWidth : cpu.width;
  // Register blocks sized to the register file: 32 zmm with AVX-512 (16
  // accumulators: 4 keys x 4 row vectors, + 4 row vectors + broadcasts),
  // 16 ymm/xmm otherwise: 12 accumulators (4 keys x 3 row vectors) + 3 row
  // vectors + 1 broadcast. 12 chains cover the FMA latency of two pipes
  // (4-5 cycles); 2 keys x 4 vectors ran 8, which bound the loops to ~73 %
  // of the FMA rate (docs/Decisions.md, "Register blocks for 16 registers").
  v.tileQ = options.vectorTileQ > 0 ? options.vectorTileQ
                                    : defaultVectorTileQ(v.vectorWidth);
  v.tileK = options.tileK;
  v.keyBlock = options.keyBlock > 0 ? options.keyBlock : 4;
  v.valueBlock = options.valueBlock > 0 ? options.valueBlock : 4;
  v.useFMA = cpu.fma;
  v.decodeRows = options.decodeRows;
  // vpermps: AVX-512F for 16 lanes, AVX2 for 8.
  v.permuteReads = (v.vectorWidth == 16 && cpu.width == 16) ||
                   (v.vectorWidth == 8 && cpu.avx2);
  return v;
}

void mlir::rpe::addFusionPasses(OpPassManager &pm, int64_t outlineMinRepeats,
                                bool splitHeads, int64_t numThreads,
                                int64_t partRowsMultiple) {
  // Front-end attention (batch_matmul on collapsed batch·heads,
  // transposes) into the 4-D form the raising matches.
  pm.addPass(createRPENormalizeAttentionPass());
  pm.addPass(createRPEFuseAttentionPass());
  pm.addPass(createCanonicalizerPass());
  // The gather trick's B×H×L×NB tables one (batch, head) at a time.
  if (splitHeads) {
    RPESplitAttentionHeadsPassOptions split;
    split.numThreads = numThreads;
    if (partRowsMultiple > 0)
      split.partRowsMultiple = partRowsMultiple;
    pm.addPass(createRPESplitAttentionHeadsPass(split));
    pm.addPass(createCanonicalizerPass());
  }
  // One kernel per distinct attention and linalg op, not one per layer;
  // with min-repeats 1 the entry functions are loop-free glue, which LLVM
  // handles in time linear in the depth (docs/Decisions.md, "Compile time").
  RPEOutlineKernelsPassOptions outline;
  outline.minRepeats = outlineMinRepeats;
  pm.addPass(createRPEOutlineKernelsPass(outline));
}

void mlir::rpe::addToLinalgPasses(OpPassManager &pm) {
  pm.addPass(createConvertRPEToLinalgPass());
  pm.addPass(createRPEDecomposeSoftmaxPass());
  // Element-wise arith/math on tensors (e.g. the position sum of composed
  // rotations, or user code) -> linalg.generic, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::rpe::addBufferizePass(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop whose iteration yields a new tensor (attention over layers in
  // an scf.for) yields a new buffer; ownership-based deallocation frees the
  // previous one. Without this, one-shot-bufferize rejected such loops.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Callers free each result: none may be an argument, a constant or
  // another result's buffer.
  pm.addPass(createRPEOwnedResultsPass());
}

void mlir::rpe::addDeallocationPasses(OpPassManager &pm) {
  // Upstream's buffer-deallocation-pipeline, with the simplification
  // skipped where a function frees hundreds of buffers at its end (a deep
  // model's entry function): its cost grows with the cube of the depth.
  memref::ExpandReallocPassOptions realloc;
  realloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(realloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  // Buffers that need no run-time alias check are freed after their last
  // use, not all at the end of the entry function.
  pm.addPass(createRPEEarlyDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createRPESimplifyDeallocationsPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::rpe::buildCPUPipeline(OpPassManager &pm,
                                 const CPUPipelineOptions &options) {
  // i0, integers wider than 2^23 bits and tf32: an error now, not a crash in
  // LLVM or in the lowering.
  pm.addPass(createRPECheckLLVMTypesPass());
  // Run-time size checks, derived from the ops as the user wrote them.
  if (options.shapeChecks)
    pm.addPass(createRPEInsertShapeChecksPass());
  // Callers own the buffers they pass: entry points copy, never write them.
  pm.addPass(createRPEReadOnlyArgumentsPass());
  if (options.gpuEmulation) {
    NVPTXPipelineOptions gpu;
    gpu.blockRows = 1;
    gpu.blockSize = 1;
    gpu.mmaThreads = 1;
    gpu.tensorCores = options.gpuTensorCores;
    gpu.tileK = options.gpuTileK;
    gpu.mmaBlockRows = options.gpuMmaBlockRows;
    gpu.mmaTileK = options.gpuMmaTileK;
    gpu.mmaRegisters = options.gpuMmaRegisters;
    gpu.mmaStageViews = options.gpuMmaStageViews;
    gpu.mmaLazyRescale = options.gpuMmaLazyRescale;
    gpu.threadTileRows = options.gpuThreadTileRows;
    gpu.threadTileColumns = options.gpuThreadTileColumns;
    gpu.emitCInterface = options.emitCInterface;
    gpu.deallocate = options.deallocate;
    buildGPUKernelPasses(pm, gpu);
    pm.addPass(createRPEGPULaunchToLoopsPass());
    pm.addPass(createCanonicalizerPass());
  } else {
    buildCPUKernelPasses(pm, options);
  }
  addCPULoweringPasses(pm, options);
  pm.addPass(createRPEInternalizeFunctionsPass());
}

void mlir::rpe::buildCPUKernelPasses(OpPassManager &pm,
                                     const CPUPipelineOptions &options) {
  // Attention: fused and tiled (FlashAttention-2 structure, nothing Lq×Lk),
  // unless the reference path is asked for.
  if (!options.reference) {
    // A head's parts (its query rows split among the threads) end on whole
    // row vectors of the vector kernel.
    VectorizeAttentionOptions v;
    if (options.vectorize)
      v = resolveVectorizeOptions(options);
    addFusionPasses(pm, options.outlineMinRepeats, options.splitAttentionHeads,
                    options.numThreads, options.vectorize ? v.vectorWidth : 0);
    if (options.vectorize) {
      RPEVectorizeAttentionPassOptions vec;
      vec.vectorWidth = v.vectorWidth;
      vec.tileQ = v.tileQ;
      vec.tileK = v.tileK;
      vec.keyBlock = v.keyBlock;
      vec.valueBlock = v.valueBlock;
      vec.fma = v.useFMA;
      vec.prefetch = v.prefetch;
      vec.decodeRows = v.decodeRows;
      vec.permuteReads = v.permuteReads;
      vec.rowReadPrefetch = v.rowReadPrefetch;
      vec.windowReadPrefetch = v.windowReadPrefetch;
      pm.addPass(createRPEVectorizeAttentionPass(vec));
    }
    // Attention the vector kernel does not take (score_mod with regions).
    RPETileAttentionPassOptions tile;
    tile.tileQ = options.tileQ;
    tile.tileK = options.tileK;
    pm.addPass(createRPETileAttentionPass(tile));
  }
  // Everything else in rpe -> linalg on tensors; softmax ops that were not
  // raised into an attention are decomposed.
  addToLinalgPasses(pm);
  // Matmuls and other contractions: an inner axpy the loop vectorizer takes.
  pm.addPass(createRPEInterchangeReductionsPass());
  // exp and tanh in elementwise code: polynomials the loop vectorizer
  // takes, not a libm call per element.
  if (options.approximateMath) {
    RPEApproximateMathPassOptions approx;
    approx.fma = getCPUVectorInfo(options.targetCPU).fma;
    pm.addPass(createRPEApproximateMathPass(approx));
  }
  // The linalg ops outside the attention kernels (projections, diagonal
  // tables, other rpe ops, the reference path, user code) on threads too.
  if (options.numThreads > 1) {
    RPEParallelizeLinalgPassOptions parallel;
    parallel.numThreads = options.numThreads;
    pm.addPass(createRPEParallelizeLinalgPass(parallel));
    pm.addPass(createCanonicalizerPass());
  }
  if (options.emitCInterface)
    pm.addPass(createRPEEmitCInterfacePass());

  // Tensors -> buffers. Function boundaries take identity-layout memrefs so
  // that the C interface is a plain descriptor.
  pm.addPass(createRPEUnshareFillsPass());
  addBufferizePass(pm);
  if (options.deallocate)
    addDeallocationPasses(pm);
  // Matmuls and other contractions on buffers (projections, MLPs, position
  // tables): register-blocked vector kernels.
  if (options.vectorize) {
    VectorizeContractionsOptions c = resolveContractionOptions(options);
    RPEVectorizeContractionsPassOptions contractions;
    contractions.vectorWidth = c.vectorWidth;
    contractions.tileM = c.tileM;
    contractions.tileN = c.tileN;
    contractions.blockK = c.blockK;
    contractions.blockN = c.blockN;
    contractions.packMinRows = c.packMinRows;
    contractions.fma = c.useFMA;
    pm.addPass(createRPEVectorizeContractionsPass(contractions));
    // Transposes (the gather trick's position tables, in every call):
    // register blocks instead of one strided scalar per element.
    RPEVectorizeTransposesPassOptions transposes;
    transposes.vectorWidth = resolveVectorizeOptions(options).vectorWidth;
    pm.addPass(createRPEVectorizeTransposesPass(transposes));
  }
  // bufferization.clone (inserted for returned buffers) -> memref.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void mlir::rpe::addCPULoweringPasses(OpPassManager &pm,
                                     const CPUPipelineOptions &options) {
  // linalg -> loops -> LLVM dialect; the attention's parallel loop goes to
  // OpenMP threads when asked for.
  if (options.numThreads > 0) {
    // One parallel region per outermost loop (a loop over heads holds the
    // kernels' loops).
    pm.addPass(createRPESerializeNestedForallsPass());
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
  } else {
    pm.addPass(createRPEHoistForallAllocasPass());
    pm.addPass(createForallToForLoopPass());
  }
  // Copies of slices as loops LLVM vectorizes, not memrefCopy calls.
  pm.addPass(createRPEExpandStridedCopiesPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  // Complex arithmetic on its real and imaginary parts (Smith's division,
  // the "improved" range); creating and taking apart complex values stays
  // for convert-complex-to-llvm below.
  pm.addPass(createConvertComplexToStandardPass());
  // Math ops without an LLVM lowering (erf, erfc, isinf, cbrt, ...) ->
  // polynomials, comparisons or libm calls.
  pm.addPass(createRPELegalizeMathPass());
  // Vector transfers and gathers -> loads; the rest of vector -> LLVM below.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // memref before scf -> cf: the memref.alloca_scope that wraps each OpenMP
  // parallel body must be lowered while that body is still one block.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.cacheAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  // ub.poison: the unrolled vector.contract / transfer chains of the GPU
  // tensor-core kernel's host emulation start from it.
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertComplexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (options.numThreads > 0)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // The loop annotations of the attention kernel's loops (no LLVM
  // unrolling) onto the latch branches' property, which becomes !llvm.loop.
  pm.addPass(createRPEApplyLoopAnnotationsPass());
}

/// Registers the pipeline `arg` built by `build` from Options, which
/// `verify` checks first (PassPipelineRegistration only parses them).
template <typename Options>
static void registerVerifiedPipeline(
    StringRef arg, StringRef description,
    void (*build)(OpPassManager &, const Options &),
    LogicalResult (*verify)(const Options &,
                            function_ref<LogicalResult(const Twine &)>)) {
  registerPassPipeline(
      arg, description,
      [build, verify](OpPassManager &pm, StringRef text,
                      function_ref<LogicalResult(const Twine &)> error) {
        Options options;
        if (failed(options.parseFromString(text)) ||
            failed(verify(options, error)))
          return failure();
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(Options());
      });
}

void mlir::rpe::registerPipelines() {
  registerVerifiedPipeline<CPUPipelineOptions>(
      "rpe-cpu-pipeline",
      "Lower rpe to the LLVM dialect for the CPU: fused and tiled attention "
      "(or the reference path), linalg, one-shot bufferization, loops, LLVM",
      buildCPUPipeline, verifyCPUPipelineOptions);
  registerVerifiedPipeline<NVPTXPipelineOptions>(
      "rpe-nvptx-pipeline",
      "Lower rpe for NVIDIA GPUs: fused attention as SIMT kernels, the rest "
      "as one-thread-per-element kernels, host code calling the mgpu* "
      "runtime, device code embedded (PTX, cubin or fatbin)",
      buildNVPTXPipeline, verifyNVPTXPipelineOptions);
}
