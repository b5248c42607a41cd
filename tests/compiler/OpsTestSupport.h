// Helpers shared by the operator tests: host tensors of any element type, running a
// workload under a schedule, and row-major index arithmetic for the C++ references.
#pragma once

#include <QtTest>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/lower/Build.h"
#include "compiler/ops/Workload.h"
#include "core/ir/IRPrinter.h"
#include "runtime/NDArray.h"

namespace tessel::testing {

/// A tensor on the host, its elements held as doubles whatever the kernel's element type.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
};


/// The row-major offset of `index` in `shape`.
inline int64_t offsetOf(const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

/// The multi-index of row-major `offset` in `shape`.
inline std::vector<int64_t> indexOf(const std::vector<int64_t>& shape, int64_t offset) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = offset % shape[d];
    offset /= shape[d];
  }
  return index;
}

/// A tensor of `shape` whose value at each offset is `value(offset)`.
inline HostTensor makeTensor(const std::vector<int64_t>& shape, const std::function<double(int64_t)>& value) {
  HostTensor t{shape, {}};
  for (int64_t i = 0; i < elementCount(shape); ++i) t.values.push_back(value(i));
  return t;
}

/// Distinct, exactly representable values (a copy that reads the wrong element shows).
inline HostTensor distinctTensor(const std::vector<int64_t>& shape, int seed = 0) {
  return makeTensor(shape, [seed](int64_t i) { return double((i * 37 + seed * 11) % 1009) - 500.0; });
}

inline void storeElement(void* data, DataType type, size_t i, double v) {
  if (type == DataType::float32()) static_cast<float*>(data)[i] = float(v);
  else if (type == DataType::float64()) static_cast<double*>(data)[i] = v;
  else if (type == DataType::int32()) static_cast<int32_t*>(data)[i] = int32_t(v);
  else if (type == DataType::int64()) static_cast<int64_t*>(data)[i] = int64_t(v);
  else if (type == DataType::int8()) static_cast<int8_t*>(data)[i] = int8_t(v);
  else if (type == DataType::uint8()) static_cast<uint8_t*>(data)[i] = uint8_t(v);
  else if (type == DataType::boolean()) static_cast<uint8_t*>(data)[i] = v != 0 ? 1 : 0;
  else qFatal("element type %s is not supported by the test", type.toString().c_str());
}

inline double loadElement(const void* data, DataType type, size_t i) {
  if (type == DataType::float32()) return static_cast<const float*>(data)[i];
  if (type == DataType::float64()) return static_cast<const double*>(data)[i];
  if (type == DataType::int32()) return static_cast<const int32_t*>(data)[i];
  if (type == DataType::int64()) return double(static_cast<const int64_t*>(data)[i]);
  if (type == DataType::int8()) return static_cast<const int8_t*>(data)[i];
  if (type == DataType::uint8()) return static_cast<const uint8_t*>(data)[i];
  if (type == DataType::boolean()) return static_cast<const uint8_t*>(data)[i];
  qFatal("element type %s is not supported by the test", type.toString().c_str());
  return 0;
}

/// The function `schedule` lowers `w` to, as text; the failure's message when it does not lower.
inline QString loweredText(const Workload& w, const Schedule& schedule) {
  auto lowered = lower(schedule, w.args(), w.name);
  if (!lowered.ok()) return QString::fromStdString("lowering failed: " + lowered.error().toString());
  return QString::fromStdString(toString(lowered->func));
}

inline std::vector<int64_t> constShape(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape()) shape.push_back(*asConstInt(e));
  return shape;
}

/// Builds `schedule`, runs it on `inputs` (one per workload input, in order) and returns
/// every output. Fails the test (returns empty) when building fails.
inline std::vector<HostTensor> runWorkload(const Workload& w, const Schedule& schedule,
                                           const std::vector<HostTensor>& inputs) {
  auto built = build(schedule, w.args(), w.name);
  if (!built) {
    qWarning("%s", built.error().toString().c_str());
    return {};
  }
  std::vector<runtime::Value> args;
  std::vector<runtime::NDArray> outputs;
  for (size_t k = 0; k < w.inputs.size(); ++k) {
    auto array = runtime::NDArray::empty(constShape(w.inputs[k]), toRuntimeType(w.inputs[k].dtype()));
    for (size_t i = 0; i < inputs[k].values.size(); ++i)
      storeElement(array.data(), w.inputs[k].dtype(), i, inputs[k].values[i]);
    args.push_back(array);
  }
  for (auto& output : w.outputs) {
    auto array = runtime::NDArray::empty(constShape(output), toRuntimeType(output.dtype()));
    std::memset(array.data(), 0x5a, size_t(array.byteSize()));  // untouched elements show
    outputs.push_back(array);
    args.push_back(array);
  }
  built->function.callPacked(args);
  std::vector<HostTensor> results;
  for (size_t k = 0; k < outputs.size(); ++k) {
    HostTensor t{outputs[k].shape(), {}};
    for (int64_t i = 0; i < outputs[k].numElements(); ++i)
      t.values.push_back(loadElement(outputs[k].data(), w.outputs[k].dtype(), size_t(i)));
    results.push_back(t);
  }
  return results;
}

/// An NCHW tensor stored NCHW<block>c, and back: [n][c / b][y][x][c % b].
inline HostTensor blockedCopy(const HostTensor& nchw, int64_t block) {
  const std::vector<int64_t>& s = nchw.shape;
  HostTensor blocked{{s[0], s[1] / block, s[2], s[3], block}, std::vector<double>(nchw.values.size())};
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t y = 0; y < s[2]; ++y)
        for (int64_t x = 0; x < s[3]; ++x)
          blocked.values[size_t((((n * (s[1] / block) + c / block) * s[2] + y) * s[3] + x) * block + c % block)] =
              nchw.values[size_t(((n * s[1] + c) * s[2] + y) * s[3] + x)];
  return blocked;
}

inline HostTensor nchwCopy(const HostTensor& blocked, int64_t block) {
  const std::vector<int64_t>& b = blocked.shape;
  std::vector<int64_t> s = {b[0], b[1] * block, b[2], b[3]};
  HostTensor nchw{s, std::vector<double>(blocked.values.size())};
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t y = 0; y < s[2]; ++y)
        for (int64_t x = 0; x < s[3]; ++x)
          nchw.values[size_t(((n * s[1] + c) * s[2] + y) * s[3] + x)] =
              blocked.values[size_t((((n * (s[1] / block) + c / block) * s[2] + y) * s[3] + x) * block + c % block)];
  return nchw;
}

/// Empty when `got` equals `expected` within `tolerance` (relative to magnitude); else the first difference.
inline std::string compareTensors(const HostTensor& got, const HostTensor& expected, double tolerance = 0) {
  if (got.shape != expected.shape) return "shapes differ";
  for (size_t i = 0; i < got.values.size(); ++i) {
    double want = expected.values[i];
    if (!(std::abs(got.values[i] - want) <= tolerance * (1 + std::abs(want))))
      return "element " + std::to_string(i) + ": got " + std::to_string(got.values[i]) + ", expected " +
             std::to_string(want);
  }
  return "";
}

}  // namespace tessel::testing
