// The pieces of an accumulation `C[i] = C[i] + widen(A[a]) * widen(B[b])` that the
// tensorize matchers (TensorizeLoops, TileDotNest) both recognize.
#pragma once

#include "core/ir/Expr.h"
#include "core/ir/Stmt.h"

namespace tessel {

/// cast(accumulator, X[i]) of a scalar load with one (flat) index: the load, else null.
const BufferLoadNode* widenedLoad(const Expr& e, DataType accumulator);

/// Whether `e` is the integer or float constant 0: what a sum's initialization stores.
bool isZeroConstant(const Expr& e);

/// Whether `e` loads the element `store` writes (same buffer, same flat index).
bool loadsStoredElement(const Expr& e, const BufferStoreNode* store);

}  // namespace tessel
