//===- Compiler.h - ahead-of-time compilation of rpe modules ----*- C++ -*-===//
//
// The pieces of `rpe-compile`, shared with the C API: lower a module for a
// target, write a C header for its entry points, and emit LLVM IR, assembly,
// an object file or a shared library, all in-process through LLVM's
// TargetMachine (a shared library is linked by the system C compiler driver).
//
//===----------------------------------------------------------------------===//

#ifndef RPE_COMPILER_COMPILER_H
#define RPE_COMPILER_COMPILER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class DialectRegistry;

namespace rpe {

/// "rpe <version> (LLVM <version>)": what `--version` of the tools and
/// rpeVersion() of the C API print.
const char *getVersionString();

/// Adds the rpe version to what `--version` prints (call before parsing the
/// command line).
void addVersionPrinter();

enum class EmitKind { MLIR, LLVM, Asm, Object, Shared, PTX, Cubin, Fatbin };

/// Parses an --emit value ("mlir", "llvm", "asm", "obj", "shared"; with
/// --target=nvptx also "ptx", "cubin", "fatbin": the device code alone).
std::optional<EmitKind> parseEmitKind(StringRef name);

struct CompileOptions {
  /// "cpu"; "nvptx" (rpe-nvptx-pipeline: host code calling the mgpu*
  /// functions of librpe_cuda_runtime, device code for `chip` embedded);
  /// or "nvptx-emulated": the kernels rpe-nvptx-pipeline builds, with one
  /// thread per block, run as loops on the CPU (for testing the GPU code
  /// without a GPU).
  std::string target = "cpu";
  /// GPU architecture for --target=nvptx: sm_XY, sm_XYa or sm_XYf (sm_70 on,
  /// a chip LLVM's NVPTX backend knows).
  std::string chip = "sm_80";
  EmitKind emit = EmitKind::Object;
  /// LLVM optimization level, 0..3.
  unsigned optLevel = 2;
  /// CPU to generate code for: "generic", "native" (the host) or an LLVM CPU
  /// name such as "skylake-avx512".
  std::string cpu = "generic";
  /// rpe-cpu-pipeline options: OpenMP threads for the attention's parallel
  /// loop (0: sequential), the unfused reference path, attention tile sizes.
  unsigned numThreads = 0;
  bool reference = false;
  int64_t tileQ = 64;
  int64_t tileK = 64;
  /// nvptx and nvptx-emulated: f16 attention as the tensor-core kernel.
  bool tensorCores = true;
  /// nvptx: the GPU kernels' shapes in rpe-nvptx-pipeline's option syntax
  /// ("mma-threads=256 mma-tile-k=16"): block-rows, tile-k, mma-threads,
  /// mma-block-rows, mma-tile-k, mma-registers, mma-stage-views,
  /// mma-lazy-rescale and block-size. Empty: the defaults.
  std::string gpuKernelOptions;
  /// Verify the IR after every pass of the pipeline (as rpe-opt does), not
  /// only the parsed input and the lowered result: a debugging aid for
  /// pass developers (about a sixth of an attention module's compile time).
  bool verifyEach = false;
};

/// Registers what compiling needs: rpe, the upstream dialects and the LLVM IR
/// translations.
void registerCompilerDialects(DialectRegistry &registry);

/// Checks the options (target, CPU, level); emits errors at `loc`.
LogicalResult checkOptions(const CompileOptions &options, Location loc);

/// Rejects text that MLIR 22's parser is known to crash on, with an error at
/// the first occurrence (outside `//` comments and strings): a dense array
/// of `index` (`array<index: ...>`: parseDenseArrayAttr asks an index type
/// for its bit width), and a malformed `permutation` / `dimensions` list of
/// `linalg.transpose` / `broadcast` / `reduce` in custom form (their parser
/// stores the null attribute of a failed parse), properties other than a
/// dictionary (or an alias of one) in the head of a custom-form linalg op
/// (`linalg.matmul <[1]>`: parseCommonStructuredOpParts casts them to a
/// DictionaryAttr unchecked), an `iterator_types` entry of a custom-form
/// `linalg.generic`'s trait (written out or an alias) that is not a list of
/// strings (its parser casts every element to a StringAttr unchecked), and
/// brackets (`(`, `[`,
/// `{`, `<`) nested more than 1000 deep (the parser recurses per level and
/// overflows the stack a few thousand levels down). Call it before parsing
/// `text` (named `bufferName`).
LogicalResult rejectKnownParserCrashes(StringRef text, StringRef bufferName,
                                       MLIRContext *context);

/// Prepares a parsed input module for the compile path (rpe-compile, the C
/// API): rejects what it cannot take, with an error at its location — a
/// nested `module` (the pipelines lower the top-level module's functions;
/// kernels outlined from a nested one would not be found) — then adds
/// @F_check to every public @F (rpe-insert-shape-checks), which the C header
/// and the Python package call before @F. rpe-cpu-pipeline inserts the
/// checks too (a second run adds nothing).
LogicalResult prepareInputModule(ModuleOp module);

/// Lowers `module` in place to the LLVM dialect with rpe-cpu-pipeline and
/// checks that nothing else is left. Errors go to the context's diagnostic
/// handler, at the location of the op that could not be lowered.
LogicalResult lowerToLLVMDialect(ModuleOp module,
                                 const CompileOptions &options);

/// Writes a C header declaring `_mlir_ciface_<name>` for every public
/// function of `module` (which must not be lowered yet), with the memref
/// descriptor structs they take, and for functions with shape checks
/// (prepareInputModule) the checked `rpe_<name>` / `rpe_<name>_check`.
/// `device` (--target=nvptx): memrefs live in device memory, and every
/// entry point also gets `rpe_<name>_on_stream` (the caller's CUstream) and
/// `rpe_<name>_host` (host memory in and out, copied) over
/// librpe_cuda_runtime.
LogicalResult writeCHeader(ModuleOp module, StringRef guard, raw_ostream &os,
                           bool device = false);

/// Runs `write` on a temporary file next to `path` and renames it to `path`
/// when `write` succeeds (else removes it): an interrupted or failing
/// compilation never leaves a truncated output. "-" writes to stdout. A
/// special file (a device such as /dev/null, a FIFO) is not replaced: the
/// temporary file (in the system's temporary directory) is copied into it.
/// Write errors (a full disk) are diagnostics at `loc`.
LogicalResult writeAtomically(StringRef path, Location loc,
                              function_ref<LogicalResult(StringRef)> write);

/// Writes `text` to `path` atomically (writeAtomically).
LogicalResult writeTextAtomically(StringRef path, StringRef text, Location loc);

/// Emits the lowered `module` as `options.emit` into `outputPath` ("-" is
/// stdout for text kinds).
LogicalResult emitArtifact(ModuleOp module, const CompileOptions &options,
                           StringRef outputPath);

} // namespace rpe
} // namespace mlir

#endif // RPE_COMPILER_COMPILER_H
