//===- NVPTXPipeline.cpp - rpe-nvptx-pipeline -------------------*- C++ -*-===//

#include "rpe/Dialect/RPE/Transforms/Passes.h"
#include "rpe/Dialect/RPE/Transforms/Transforms.h"
#include "rpe/Pipelines/Pipelines.h"

#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;

std::string mlir::rpe::resolveCUDAPath(StringRef path) {
  if (!path.empty())
    return path.str();
  for (const char *name : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(name))
      if (!value->empty())
        return *value;
  return "/usr/local/cuda";
}

void mlir::rpe::buildNVPTXPipeline(OpPassManager &pm,
                                   const NVPTXPipelineOptions &options) {
  // i0, integers wider than 2^23 bits and tf32: an error now, not a crash in
  // LLVM or in the lowering.
  pm.addPass(createRPECheckLLVMTypesPass());
  if (options.shapeChecks)
    pm.addPass(createRPEInsertShapeChecksPass());
  pm.addPass(createRPEReadOnlyArgumentsPass());
  buildGPUKernelPasses(pm, options);
  pm.addPass(createLowerAffinePass());
  // Not arith-expand: the float min / max ops stay one instruction each.
  pm.addPass(rpe::createRPEExpandArithDivisionsPass());
  // Upstream's gpu-lower-to-nvvm-pipeline, with gpu-async-region after
  // the outlining: gpu-to-llvm lowers gpu.alloc / dealloc / memcpy only
  // in their async form (the region chains them, and waits at its end).
  pm.addPass(createConvertNVGPUToNVVMPass());
  // Constants and index computations into the launch bodies: outlined,
  // they would be kernel parameters (a division by a tile width becomes a
  // 64-bit division by a parameter, loops of known trip count stay loops).
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // ldmatrix, 32-bit fragment loads and 16-byte tile stores.
  pm.addPass(createRPEGPUAlignWorkgroupPass());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // libdevice (math functions) and the toolkit are named explicitly:
  // gpu-module-to-binary otherwise finds them only through a ptxas on PATH,
  // and without libdevice it leaves the math calls unresolved.
  std::string cuda = resolveCUDAPath(options.cudaPath);
  SmallString<256> libdevice(cuda);
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features.empty()
                        ? rpe::getDefaultPTXFeatures(options.chip)
                        : std::string(options.features);
  target.optLevel = options.optLevel;
  if (llvm::sys::fs::exists(libdevice))
    target.linkLibs.push_back(libdevice.str().str());
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  // What the NVPTX backend cannot compile in the kernels (any f80, f128
  // arithmetic, integers over 128 bits and their conversions to and from
  // floats over 64): a fatal error in the backend otherwise. The checks of
  // the first instance run again, so the pass alone checks everything.
  RPECheckLLVMTypesPassOptions types;
  types.nvptxDeviceCode = true;
  pm.addPass(createRPECheckLLVMTypesPass(types));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = cuda;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createRPEInternalizeFunctionsPass());
}

/// rpe-gpu-attention's options in rpe-nvptx-pipeline.
/// Whether the attention kernels use tensor cores: asked for, and the chip
/// has m16n8k16 mma.sync (and cp.async), sm_80 on. Older chips get the
/// SIMT kernel (LLVM cannot select those instructions for them).
static bool useTensorCores(const rpe::NVPTXPipelineOptions &options) {
  return options.tensorCores &&
         rpe::parseChipVersion(options.chip).value_or(0) >= 80;
}

static rpe::RPEGPUAttentionPassOptions
gpuAttentionPassOptions(const rpe::NVPTXPipelineOptions &options) {
  rpe::RPEGPUAttentionPassOptions attention;
  attention.blockRows = options.blockRows;
  attention.tileK = options.tileK;
  attention.tensorCores = useTensorCores(options);
  attention.mmaThreads = options.mmaThreads;
  attention.mmaBlockRows = options.mmaBlockRows;
  attention.mmaTileK = options.mmaTileK;
  attention.mmaRegisters = options.mmaRegisters;
  attention.mmaStageViews = options.mmaStageViews;
  attention.mmaLazyRescale = options.mmaLazyRescale;
  return attention;
}

std::optional<unsigned> mlir::rpe::parseChipVersion(StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  // Architecture-specific (a) and family-specific (f) variants.
  if (!chip.consume_back("a"))
    chip.consume_back("f");
  if (chip.getAsInteger(10, version))
    return std::nullopt;
  return version;
}

/// The NVPTX backend's subtarget description for `chip` ("": generic), or
/// null if LLVM has no NVPTX target.
static std::unique_ptr<llvm::MCSubtargetInfo>
createNVPTXSubtargetInfo(StringRef chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target ? target->createMCSubtargetInfo(triple, chip, "") : nullptr);
}

bool mlir::rpe::isKnownChip(StringRef chip) {
  std::optional<unsigned> version = parseChipVersion(chip);
  if (!version || *version < 70)
    return false;
  // A name of the right form that LLVM's NVPTX backend does not know
  // (sm_999) would only get a warning from it, and PTX for ISA 3.2 that
  // ptxas rejects.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget =
      createNVPTXSubtargetInfo("");
  return subtarget && subtarget->isCPUStringValid(chip);
}

std::optional<unsigned> mlir::rpe::getMinPTXVersion(StringRef chip) {
  // NVPTXSubtarget's getMinPTXVersionForSM in LLVM 22 (the PTX ISA's
  // release history), for the chips isKnownChip accepts; test/Pipelines/
  // pipeline-options.mlir compares entries with llc's default version.
  return llvm::StringSwitch<std::optional<unsigned>>(chip)
      .Case("sm_70", 60)
      .Case("sm_72", 61)
      .Case("sm_75", 63)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Cases({"sm_89", "sm_90"}, 78)
      .Case("sm_90a", 80)
      .Cases({"sm_100", "sm_100a", "sm_101", "sm_101a"}, 86)
      .Cases({"sm_120", "sm_120a"}, 87)
      .Cases({"sm_100f", "sm_101f", "sm_103", "sm_103a", "sm_103f", "sm_120f",
              "sm_121", "sm_121a", "sm_121f"},
             88)
      .Cases({"sm_88", "sm_110", "sm_110a", "sm_110f"}, 90)
      .Default(std::nullopt);
}

std::string mlir::rpe::getDefaultPTXFeatures(StringRef chip) {
  // 8.0 knows every chip up to sm_90a and everything rpe's kernels use;
  // later chips need their own minimum, which is LLVM's default.
  std::optional<unsigned> minimum = getMinPTXVersion(chip);
  return minimum && *minimum <= 80 ? "+ptx80" : "";
}

/// Checks `features` (comma-separated +name / -name) for `chip`: every
/// name one the NVPTX backend knows (it would only warn and ignore it), and
/// no +ptxNN older than the chip's minimum (a fatal error in the backend,
/// with no location).
static LogicalResult
verifyPTXFeatures(StringRef chip, StringRef features,
                  function_ref<LogicalResult(const Twine &)> error) {
  if (features.trim().empty())
    return success();
  // isKnownChip has accepted `chip`: the subtarget exists.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget =
      createNVPTXSubtargetInfo(chip);
  if (!subtarget)
    return error("rpe-nvptx-pipeline: LLVM has no NVPTX target");
  std::optional<unsigned> minimum = rpe::getMinPTXVersion(chip);
  SmallVector<StringRef> parts;
  features.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    StringRef feature = part.trim();
    StringRef name = feature.drop_front();
    if (!feature.starts_with("+") && !feature.starts_with("-"))
      return error("rpe-nvptx-pipeline: feature '" + feature +
                   "' must begin with + or -");
    if (!llvm::any_of(
            subtarget->getAllProcessorFeatures(),
            [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; }))
      return error("rpe-nvptx-pipeline: unknown NVPTX feature '" + name +
                   "' (e.g. +ptx80, +ptx86)");
    unsigned version = 0;
    if (feature.starts_with("+") && name.consume_front("ptx") &&
        !name.getAsInteger(10, version) && minimum && version < *minimum)
      return error("rpe-nvptx-pipeline: features '" + feature +
                   "' ask for PTX ISA " + Twine(version / 10) + "." +
                   Twine(version % 10) + ", which does not know " + chip +
                   " (it needs +ptx" + Twine(*minimum) + " or later)");
  }
  return success();
}

LogicalResult mlir::rpe::verifyNVPTXPipelineOptions(
    const NVPTXPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> error) {
  if (!isKnownChip(options.chip))
    return error("rpe-nvptx-pipeline: unknown chip '" + options.chip +
                 "' (expected sm_70 or later, e.g. sm_80, sm_90, sm_90a)");
  if (failed(verifyPTXFeatures(options.chip, options.features, error)))
    return failure();
  // gpu-module-to-binary reports an unknown format as an error but does not
  // fail.
  StringRef format = options.format;
  if (format != "isa" && format != "bin" && format != "fatbin")
    return error("rpe-nvptx-pipeline: format must be isa, bin or fatbin, "
                 "got '" +
                 format + "'");
  if (options.optLevel < 0 || options.optLevel > 3)
    return error("rpe-nvptx-pipeline: opt-level must be 0..3, got " +
                 Twine(options.optLevel));
  // The options of the passes it builds (rpe-gpu-offload's block-size is a
  // CUDA block's thread limit).
  if (options.blockSize <= 0 || options.blockSize > 1024)
    return error("rpe-nvptx-pipeline: block-size must be in 1..1024, got " +
                 Twine(options.blockSize));
  if (failed(checkRegisterTile(options.threadTileRows,
                               options.threadTileColumns, "rpe-nvptx-pipeline",
                               "thread-tile-rows", "thread-tile-columns",
                               error)))
    return failure();
  RPEGPUAttentionPassOptions a = gpuAttentionPassOptions(options);
  return checkGPUAttentionOptions(
      GPUAttentionOptions{a.blockRows, a.tileK, a.maxHeadDim, a.tensorCores,
                          a.mmaThreads, a.mmaBlockRows, a.mmaTileK,
                          a.mmaRegisters, a.mmaStageViews, a.mmaLazyRescale},
      [&](const Twine &message) {
        return error("rpe-nvptx-pipeline: rpe-gpu-attention: " + message);
      });
}

void mlir::rpe::buildGPUKernelPasses(OpPassManager &pm,
                                     const NVPTXPipelineOptions &options) {
  // Repeated linalg ops only: each outlined op is a GPU kernel launch of
  // its own either way.
  addFusionPasses(pm, /*outlineMinRepeats=*/2);
  // Attention: one SIMT kernel per op, nothing Lq×Lk.
  pm.addPass(createRPEGPUAttentionPass(gpuAttentionPassOptions(options)));
  // mma.sync for the tensor-core kernel's matmuls; the host emulation (one
  // thread per block) runs their vector form instead.
  if (useTensorCores(options) && options.mmaThreads != 1)
    pm.addPass(createRPEGPUTensorCoresPass());
  addToLinalgPasses(pm);
  // Every reduction inside the parallel loops: one thread per output
  // element below (the projections of rpe.disentangled_bias come in the
  // CPU's axpy order).
  RPEInterchangeReductionsPassOptions interchange;
  interchange.reductionsInnermost = true;
  pm.addPass(createRPEInterchangeReductionsPass(interchange));
  if (options.emitCInterface)
    pm.addPass(createRPEEmitCInterfacePass());
  addBufferizePass(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every other linalg op: parallel loops, then one thread per iteration.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // A contraction's output element in a register across its reduction loop
  // (LLVM cannot prove the kernel's buffers disjoint).
  pm.addPass(createRPEPromoteAccumulatorsPass());
  // Several output elements per thread, sharing their loads.
  if (options.threadTileRows * options.threadTileColumns > 1) {
    RPERegisterTileReductionsPassOptions tile;
    tile.rows = options.threadTileRows;
    tile.columns = options.threadTileColumns;
    pm.addPass(createRPERegisterTileReductionsPass(tile));
  }
  RPEGPUOffloadPassOptions offload;
  offload.blockSize = options.blockSize;
  offload.deallocate = options.deallocate;
  pm.addPass(createRPEGPUOffloadPass(offload));
}
