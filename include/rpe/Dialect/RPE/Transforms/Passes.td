//===- Passes.td - rpe dialect passes ----------------------*- tablegen -*-===//

#ifndef RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD
#define RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RPEEmitCInterfacePass : Pass<"rpe-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    Adds the `llvm.emit_c_interface` unit attribute to every public
    `func.func` with a body, so that `convert-func-to-llvm` emits a
    `_mlir_ciface_<name>` wrapper taking memref descriptors by pointer: the
    entry points that C, C++ and Python call.
  }];
}

#endif // RPE_DIALECT_RPE_TRANSFORMS_PASSES_TD
