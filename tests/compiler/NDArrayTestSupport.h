// Host arrays for the tests that run compiled models (driver, export): reproducible
// random inputs and weights.
#pragma once

#include <random>
#include <vector>

#include "runtime/NDArray.h"

namespace tessel::testing {

/// A float32 array of `shape` with values drawn uniformly from [-1, 1); the same `seed`
/// gives the same values, so a failure reproduces.
inline runtime::NDArray randomFloatArray(std::vector<int64_t> shape, unsigned seed) {
  runtime::NDArray array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : array.values<float>()) v = uniform(rng);
  return array;
}

}  // namespace tessel::testing
