/*===- rpe-c/Compiler.h - C API of the rpe compiler ----------------*- C
-*-===*\
|*                                                                            *|
|* A small, self-contained C API over rpe (Debian ships the MLIR C API only   *|
|* as static archives, so rpe does not expose MlirContext & co.). Bindings    *|
|* (the Python package uses ctypes) parse, verify, describe and compile       *|
|* modules given as text; diagnostics come back as text.                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RPE_C_COMPILER_H
#define RPE_C_COMPILER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An MLIR context with the rpe dialect, the upstream dialects and the LLVM IR
/// translations registered. Not thread-safe; use one per thread.
typedef struct RpeContext RpeContext;

typedef struct {
  /// "cpu", "nvptx" (needs the CUDA toolkit to compile; the result runs on
  /// the GPU through librpe_cuda_runtime) or "nvptx-emulated" (the GPU
  /// kernels, one thread per block, as CPU loops: for tests).
  const char *target;
  /// "mlir", "llvm", "asm", "obj" or "shared"; for nvptx also "ptx",
  /// "cubin" or "fatbin".
  const char *emit;
  /// LLVM optimization level, 0..3.
  int opt_level;
  /// "generic", "native" or an LLVM CPU name.
  const char *cpu;
  /// OpenMP threads for attention's parallel loop, at most 1024; 0 =
  /// sequential.
  int num_threads;
  /// Nonzero: the unfused reference lowering of attention.
  int reference;
  /// Attention tile sizes (query rows, keys).
  long tile_q;
  long tile_k;
  /// GPU architecture for the nvptx target ("sm_80", "sm_90", ...); NULL:
  /// sm_80.
  const char *chip;
  /// Nonzero (the default): f16 attention on tensor cores for the nvptx
  /// targets (mma.sync; the tensor-core kernel's vector form when emulated).
  int tensor_cores;
  /// Nonzero: verify the IR after every pass of the pipeline (a debugging
  /// aid; by default the input and the lowered result are verified).
  int verify_each;
  /// nvptx: the GPU kernels' shapes as rpe-nvptx-pipeline options
  /// ("mma-threads=256"); NULL or "": the defaults.
  const char *gpu_kernel_options;
} RpeCompileOptions;

/// Version string of rpe and of the LLVM it is built against.
const char *rpeVersion(void);

/// Registers rpe's passes and pipelines (and the upstream ones) with the
/// global pass registry, as rpe-opt does. Idempotent.
void rpeRegisterAllPasses(void);

RpeContext *rpeContextCreate(void);
void rpeContextDestroy(RpeContext *context);

/// Fills `options` with the defaults: cpu target, shared library, -O2,
/// generic CPU.
void rpeCompileOptionsInit(RpeCompileOptions *options);

/// Parses and verifies `text` (`length` bytes; `source_name` names it in
/// diagnostics), lowers it for `options->target` and writes
/// `options->emit` to `output_path`; with `header_path`, also writes a C
/// header of the entry points. Returns 0 on success, 1 on failure; on
/// failure `*diagnostics` (if not NULL) receives the messages, to be released
/// with rpeFreeString. Warnings of a successful compilation are returned the
/// same way (or NULL when there are none).
int rpeCompile(RpeContext *context, const char *text, size_t length,
               const char *source_name, const RpeCompileOptions *options,
               const char *output_path, const char *header_path,
               char **diagnostics);

/// Parses and verifies `text` and describes its public functions as JSON:
/// {"functions": [{"name": ..., "arguments": [T...], "results": [T...]}]}
/// with T = {"kind": "tensor", "element": "f32", "shape": [1, -1, 8]} (-1 is
/// a dynamic size) or {"kind": "scalar", "type": "index"}. A function with
/// run-time size checks (rpe-insert-shape-checks) also has "shape_check":
/// {"function": "<name>_check", "messages": [printf formats]}: the check
/// function takes the same arguments and returns (code, a, b, c); code 0
/// means the sizes agree, else messages[code - 1] formats (a, b, c).
/// Returns 0 and sets `*json`, or 1 and sets `*diagnostics`; release both
/// with rpeFreeString.
int rpeDescribeModule(RpeContext *context, const char *text, size_t length,
                      const char *source_name, char **json, char **diagnostics);

void rpeFreeString(char *string);

#ifdef __cplusplus
}
#endif

#endif /* RPE_C_COMPILER_H */
