// Branch-free float32 approximations of exp, log, tanh, erf, sigmoid, sin and cos emitted as LLVM IR.
//
// Private to the LLVM backend. The C library has no vector forms LLVM can call, so a vector
// exp used to become one expf call per lane; these polynomial kernels work on whole vectors
// (any lane count, or a scalar, which the loop vectorizer can then widen) and use only
// selects, never branches, so AVX2 and AVX-512 run every lane at once.
#pragma once

#include "core/ir/Expr.h"

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace tessel {

/// True when emitFloat32Math has a polynomial kernel for `op`.
bool hasFloat32MathKernel(Intrinsic op);

/// `op` applied to `x`, a float or a vector of floats, at the insertion point of `builder`.
/// Accuracy against the C library in float32: exp and log within 2e-6 relative error
/// (log within 2e-7 absolute near 1); tanh, erf and sigmoid within 2e-6 absolute. Special
/// values follow the C library: exp overflows to +inf and underflows to 0, log(0) = -inf,
/// log of a negative number is NaN, log(inf) = inf, tanh and erf of +-inf are +-1, and NaN
/// propagates. Only ops for which hasFloat32MathKernel is true may be passed.
llvm::Value* emitFloat32Math(llvm::IRBuilderBase& builder, Intrinsic op, llvm::Value* x);

/// sin(x) or cos(x) of a float or a vector of floats, within 2e-7 absolute error of the C
/// library for |x| <= kFloat32TrigonometricLimit, with sin(-0) = -0 and NaN propagating.
/// Larger |x| (and infinities) need a reduction this kernel lacks: the caller must send
/// such lanes to the C library.
llvm::Value* emitFloat32SinOrCos(llvm::IRBuilderBase& builder, llvm::Value* x, bool cosine);
constexpr float kFloat32TrigonometricLimit = 8192.0f;

}  // namespace tessel
