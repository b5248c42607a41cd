// Fixed-length features of a lowered loop nest: the input of the tuner's cost model.
#pragma once

#include <string>
#include <vector>

#include "core/ir/Stmt.h"

namespace tessel {

/// The machine facts some features are relative to. The defaults describe one AVX-512
/// core; pass the tuning target's values so that "fits in registers" and "cores kept
/// busy" mean what they will mean when the candidate runs.
struct LoopFeatureTarget {
  int cores = 1;                  ///< Threads the runtime runs parallel loops on.
  int vectorBytes = 64;           ///< Width of one vector register (64: AVX-512, 32: AVX2).
  int vectorRegisters = 32;       ///< Vector registers (32: AVX-512, 16: AVX2).
};

/// The number of features extractLoopFeatures returns; the same for every function.
size_t loopFeatureCount();

/// One name per feature, in order ("func.flops", "main.vector_lanes", "buf0.bytes", ...);
/// tuner/features/Features.md says what each one means.
const std::vector<std::string>& loopFeatureNames();

/// Ansor-style features of `lowered` (the final IR of lower(), flat indices and vectors
/// already widened; any earlier step's IR works too): exactly loopFeatureCount() finite
/// floats, bit-identical for structurally equal functions. Counts that grow with the
/// problem are log2(1 + x). An undefined or empty function gives all zeros.
std::vector<float> extractLoopFeatures(const PrimFunc& lowered, const LoopFeatureTarget& target = {});

}  // namespace tessel
