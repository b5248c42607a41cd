// What the ONNX import tests share: Debian's backend test data, error text, files written.
#pragma once

#include <QtTest>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/support/Error.h"

namespace tessel::testing::onnx_import {

inline const std::string kNodeTests = "/usr/share/libonnx-testdata/data/node/";

// Tests reading Debian's ONNX backend test data skip where it is not installed; the others
// build their models here and always run.
#define REQUIRE_CONFORMANCE_DATA()                                                       \
  do {                                                                                   \
    if (!std::filesystem::exists(kNodeTests)) QSKIP("libonnx-testdata is not installed"); \
  } while (false)

inline std::string conformanceModel(const std::string& test) { return kNodeTests + test + "/model.onnx"; }
inline std::string conformanceTensor(const std::string& test, const std::string& file) {
  return kNodeTests + test + "/test_data_set_0/" + file;
}

inline void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  file << bytes;
}

template <class T>
QString errorText(const Expected<T>& result) {
  return result ? QString("(no error)") : QString::fromStdString(result.error().toString());
}

}  // namespace tessel::testing::onnx_import
