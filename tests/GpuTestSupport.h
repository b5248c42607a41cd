// What the GPU tests share: whether an OpenCL device is here to run on (PoCL runs OpenCL on
// the CPU), and reproducible random inputs.
#pragma once

#include <QString>
#include <QtTest>

#include <random>
#include <vector>

#include "runtime/Error.h"
#include "runtime/OpenCLDriver.h"

namespace tessel::testing {

/// Why the OpenCL tests cannot run here, or empty when a device is there.
inline QString openCLUnavailable() {
  try {
    if (runtime::listOpenCLDevices().empty()) return "no OpenCL platform with a device (install pocl-opencl-icd)";
  } catch (const runtime::Error& error) {
    return QString("no OpenCL platform: ") + error.what();
  }
  return {};
}

/// `count` floats uniform in [-1, 1), the same for the same seed.
inline std::vector<float> randomFloats(size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

}  // namespace tessel::testing

/// Reports the test SKIPPED (with the reason) where no OpenCL device is available.
#define SKIP_WITHOUT_OPENCL()                                              \
  do {                                                                     \
    QString reason = tessel::testing::openCLUnavailable();                 \
    if (!reason.isEmpty()) QSKIP(qPrintable(reason));                      \
  } while (false)
