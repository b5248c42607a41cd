// The facts LoopFeatures reads from a lowered loop nest: store groups in their loop context,
// their arithmetic and their memory accesses in linear form. Internal to tuner/features.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/Stmt.h"

namespace tessel::features {

/// One loop around a store, outermost first.
struct LoopLevel {
  const VarNode* var = nullptr;
  double extent = 1;  ///< Trip count; an upper bound when the extent is not a constant.
  ForKind kind = ForKind::Serial;
};

/// Operations of one execution of a group's statements, every vector lane counted (a
/// float32x16 add is 16 adds), so that totals do not depend on vectorization.
struct OpCounts {
  double floatAddSub = 0, floatMul = 0, floatDiv = 0, floatMinMax = 0;
  double fmaShaped = 0;  ///< Float (a*b)+c pairs; each is also one mul and one add.
  double mathCalls = 0;  ///< exp, log, sqrt, tanh, ... (an fma intrinsic counts as mul + add).
  double compareSelect = 0;  ///< Comparisons, selects and boolean logic.
  double intOps = 0;         ///< Integer + - * min max (index arithmetic) and bitwise operations.
  double intDivMod = 0;      ///< Integer division and remainder.
  double casts = 0;
  /// Floating-point operations: adds, muls, divs, min/max and math calls.
  double flops() const { return floatAddSub + floatMul + floatDiv + floatMinMax + mathCalls; }
  void add(const OpCounts& other, double times = 1);
};

/// One load or store. Its flat element index is described near a sample point of the loop
/// nest (every loop at its middle iteration): `offset` there, plus coefficients[l] elements
/// per step of loop l and laneStride per vector lane. Exact for affine indices; for
/// floordiv/floormod/min/max (fused loops, padding) it is the local step, or the average
/// step over the loop where the local one is zero (i // 8).
struct Access {
  const BufferNode* buffer = nullptr;  ///< Identity only; never iterated in pointer order.
  bool isWrite = false;
  int lanes = 1;
  int elementBytes = 4;
  std::vector<double> coefficients;  ///< One per enclosing loop level, in elements.
  std::vector<bool> unknown;         ///< Levels a gathered index (one that loads) depends on.
  double laneStride = 0;
  double offset = 0;
};

/// The stores of one buffer directly inside the same innermost loop: one statement of the
/// schedule, replicated when the loops inside it were unrolled (and widened when vectorized).
/// This is the unit that Ansor's per-store features describe.
struct StoreGroup {
  std::vector<LoopLevel> loops;  ///< Enclosing loops, outermost first.
  const BufferNode* storedBuffer = nullptr;
  int statements = 0;  ///< Stores in the group: the unroll factor.
  int lanes = 1;       ///< The widest store's vector lanes.
  bool guarded = false;  ///< Under an IfThenElse.
  OpCounts ops;          ///< All statements of the group, one execution of its loop body.
  std::vector<Access> accesses;  ///< In program order.
  double trips() const;  ///< Product of the loop extents.
};

struct AllocationInfo {
  const BufferNode* buffer = nullptr;
  double bytes = 0;
  bool local = false;  ///< Not "global" scope: registers or stack.
};

struct LoopNestFacts {
  std::vector<StoreGroup> groups;  ///< In program order of their first store.
  std::vector<AllocationInfo> allocations;
  int loops = 0;
  int maxDepth = 0;
  int storeStatements = 0;
};

/// Walks `func` once. Never throws on well-formed IR of any shape (any loop kinds, extents
/// that are not constants, indices that are not affine).
LoopNestFacts analyzeLoopNest(const PrimFunc& func);

}  // namespace tessel::features
