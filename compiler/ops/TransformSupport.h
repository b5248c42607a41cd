// Shape checks, axis handling and index helpers shared by the data-movement operators
// (Transform, Indexing, Generate, Resize).
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ops/Workload.h"
#include "core/ir/IROperators.h"

namespace tessel::transform_support {

using Shape = std::vector<int64_t>;

/// A Diagnostic located at operator `op` (the graph layer adds the node).
inline Diagnostic opError(const std::string& op, std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), op, 0, 0, std::move(hint)};
}

/// An axis in [-rank, rank) made non-negative, or nullopt.
inline std::optional<int64_t> normalizeAxis(int64_t axis, size_t rank) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

/// A Diagnostic when `shape` has a dimension below 1 (static, non-empty tensors only), or
/// below 0 when the operator `allowEmpty` (it then computes an empty tensor: loops that never run).
inline std::optional<Diagnostic> checkShape(const std::string& op, const Shape& shape, const char* what,
                                            bool allowEmpty = false) {
  for (int64_t d : shape)
    if (d < (allowEmpty ? 0 : 1))
      return opError(
          op, std::string(what) + " shape " + shapeName(shape) + " has a dimension below " + (allowEmpty ? "0" : "1"),
          allowEmpty ? "static shapes with non-negative dimensions only"
                     : "static shapes with positive dimensions only");
  return std::nullopt;
}

/// `index` clamped into [0, extent): keeps a read whose value is discarded (or whose index
/// ONNX leaves undefined) inside its buffer.
inline Expr clampIndex(Expr index, int64_t extent) { return min(max(index, Expr(0)), Expr(extent - 1)); }

/// A runtime index (any integer or float type) made an index-typed value in [0, extent):
/// negative values count from the end, then out-of-range ones are clamped.
inline Expr wrapAndClampIndex(Expr index, int64_t extent) {
  index = cast(DataType::index(), index);
  return clampIndex(select(index < Expr(int64_t(0)), index + Expr(extent), index), extent);
}

/// The row-major flat offset of `indices` in `shape`, as an index expression.
inline Expr flatOffset(const std::vector<Expr>& indices, const Shape& shape) {
  Expr flat = Expr(int64_t(0));
  for (size_t d = 0; d < shape.size(); ++d) flat = d == 0 ? indices[d] : flat * Expr(shape[d]) + indices[d];
  return flat;
}

/// A workload with one output stage.
inline Workload singleOutput(std::string name, std::vector<te::Tensor> inputs, te::Tensor out) {
  Workload w;
  w.name = std::move(name);
  w.inputs = std::move(inputs);
  w.outputs = {out};
  return w;
}

/// `name` with characters that are not valid in a symbol ('-', '.') replaced.
inline std::string symbolSafe(std::string name) {
  for (char& c : name) {
    if (c == '-')
      c = 'm';
    else if (c == '.')
      c = 'p';
  }
  return name;
}

/// A short stable tag for parameters a workload name would be too long to spell out (scales,
/// fill values, constant tables): kernels that differ only there get different names.
inline std::string parameterTag(const std::vector<double>& parameters) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the values' bits
  for (double v : parameters) {
    uint64_t bits;
    static_assert(sizeof bits == sizeof v);
    std::memcpy(&bits, &v, sizeof bits);
    for (int byte = 0; byte < 8; ++byte) hash = (hash ^ ((bits >> (8 * byte)) & 0xff)) * 1099511628211ull;
  }
  return "h" + std::to_string(hash % 1000000007);
}

}  // namespace tessel::transform_support
