//===- RPEBase.td - rpe dialect definition -----------------*- tablegen -*-===//
//
// The rpe dialect: relative position encodings as first-class ops.
//
//===----------------------------------------------------------------------===//

#ifndef RPE_DIALECT_RPE_IR_RPEBASE_TD
#define RPE_DIALECT_RPE_IR_RPEBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def RPE_Dialect : Dialect {
  let name = "rpe";
  let cppNamespace = "::mlir::rpe";
  let summary = "Relative position encodings as first-class ops";
  let description = [{
    The `rpe` dialect describes relative position encodings (T5 /
    Transformer-XL bias, Shaw et al. key/value embeddings, RoPE, DeBERTa
    disentangled attention, Swin 2-D bias, ALiBi) and attention that uses
    them, with exact semantics, so that they can be rewritten algebraically,
    fused into FlashAttention-style kernels and lowered to CPU and GPU code.

    Positions: query `i ∈ [0, Lq)`, key `j ∈ [0, Lk)`; an optional
    `q_offset` shifts query positions to `i + q_offset`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let hasConstantMaterializer = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

class RPE_Op<string mnemonic, list<Trait> traits = []>
    : Op<RPE_Dialect, mnemonic, traits>;

// Element types accepted by the tensor ops.
def RPE_Float : AnyTypeOf<[F32, F16, BF16]>;
def RPE_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def RPE_IntTensor : RankedTensorOf<[AnySignlessInteger]>;

#endif // RPE_DIALECT_RPE_IR_RPEBASE_TD
