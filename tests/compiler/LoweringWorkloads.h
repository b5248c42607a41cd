// Small workloads shared by the lowering tests, with plain C++ references.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ir/IROperators.h"
#include "core/te/Tensor.h"

namespace tessel::testing {

struct TestWorkload {
  std::vector<te::Tensor> inputs, outputs;
  /// Computes the last output from the inputs (row-major float arrays).
  std::function<void(const std::vector<std::vector<float>>&, std::vector<float>&)> reference;
  std::vector<te::Tensor> args() const {
    auto all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    return all;
  }
};

/// B[i, j] = A[i, j]*2 + 1 over rows x cols.
inline TestWorkload scaleWorkload(int64_t rows, int64_t cols) {
  TestWorkload w;
  te::Tensor A = te::placeholder({Expr(rows), Expr(cols)}, DataType::float32(), "A");
  te::Tensor B = te::compute({Expr(rows), Expr(cols)}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "B");
  w.inputs = {A};
  w.outputs = {B};
  w.reference = [](const std::vector<std::vector<float>>& in, std::vector<float>& out) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = in[0][i] * 2.0f + 1.0f;
  };
  return w;
}

/// C[i, j] = sum over k of A[i, k] * B[k, j].
inline TestWorkload matmulWorkload(int64_t m, int64_t n, int64_t k) {
  TestWorkload w;
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({Expr(k), Expr(n)}, DataType::float32(), "B");
  IterVar r = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute({Expr(m), Expr(n)}, [&](Var i, Var j) { return te::sum(A(i, r) * B(r, j), {r}); }, "C");
  w.inputs = {A, B};
  w.outputs = {C};
  w.reference = [m, n, k](const std::vector<std::vector<float>>& in, std::vector<float>& out) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += in[0][i * k + p] * in[1][p * n + j];
        out[i * n + j] = sum;
      }
  };
  return w;
}

/// B = A + 1, C[i, j] = B[i, j] * B[i, j] + B[i, min(j + 1, cols - 1)]: a two-stage chain
/// whose consumer reads a neighbour, so attached regions are wider than one point.
inline TestWorkload chainWorkload(int64_t rows, int64_t cols) {
  TestWorkload w;
  te::Tensor A = te::placeholder({Expr(rows), Expr(cols)}, DataType::float32(), "A");
  te::Tensor B = te::compute({Expr(rows), Expr(cols)}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
  te::Tensor C = te::compute(
      {Expr(rows), Expr(cols)},
      [&](Var i, Var j) { return B(i, j) * B(i, j) + B(i, min(j + 1, Expr(cols - 1))); }, "C");
  w.inputs = {A};
  w.outputs = {C};
  w.reference = [rows, cols](const std::vector<std::vector<float>>& in, std::vector<float>& out) {
    auto b = [&](int64_t i, int64_t j) { return in[0][i * cols + j] + 1.0f; };
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        out[i * cols + j] = b(i, j) * b(i, j) + b(i, std::min(j + 1, cols - 1));
  };
  return w;
}

/// C[i, j] = sum over k of acc(A[i, k]) * acc(W[j / 16, k / r, j % 16, k % r]): a matmul whose
/// weight is packed in the [16 outputs][r reduction elements] blocks a 16-lane dot-product
/// intrinsic reads. n must be a multiple of 16 and k of r.
inline TestWorkload packedDotMatmulWorkload(int64_t m, int64_t n, int64_t k, DataType dataType, DataType weightType,
                                            DataType accumulator, int64_t r) {
  TestWorkload w;
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, dataType, "A");
  te::Tensor W = te::placeholder({Expr(n / 16), Expr(k / r), Expr(int64_t(16)), Expr(r)}, weightType, "W");
  IterVar p = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) {
        return te::sum(cast(accumulator, A(i, p)) * cast(accumulator, W(j / 16, p / r, j % 16, p % r)), {p});
      },
      "C");
  w.inputs = {A, W};
  w.outputs = {C};
  w.reference = [m, n, k, r](const std::vector<std::vector<float>>& in, std::vector<float>& out) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0;
        for (int64_t q = 0; q < k; ++q) sum += in[0][i * k + q] * in[1][((j / 16 * (k / r) + q / r) * 16 + j % 16) * r + q % r];
        out[i * n + j] = sum;
      }
  };
  return w;
}

/// int32 C from uint8 A and int8 W in [16][4] blocks: what dot_16x4_u8i8 reads.
inline TestWorkload int8MatmulWorkload(int64_t m, int64_t n, int64_t k) {
  return packedDotMatmulWorkload(m, n, k, DataType::uint8(), DataType::int8(), DataType::int32(), 4);
}

/// float32 C from bfloat16 A and W in [16][2] blocks: what dot_16x2_bf16 reads.
inline TestWorkload bfloat16MatmulWorkload(int64_t m, int64_t n, int64_t k) {
  return packedDotMatmulWorkload(m, n, k, DataType::bfloat16(), DataType::bfloat16(), DataType::float32(), 2);
}

/// A workload by name and dimensions, as written in golden test headers.
inline TestWorkload workloadByName(const std::string& name, const std::vector<int64_t>& dims) {
  if (name == "scale" && dims.size() == 2) return scaleWorkload(dims[0], dims[1]);
  if (name == "matmul" && dims.size() == 3) return matmulWorkload(dims[0], dims[1], dims[2]);
  if (name == "chain" && dims.size() == 2) return chainWorkload(dims[0], dims[1]);
  if (name == "int8_matmul" && dims.size() == 3) return int8MatmulWorkload(dims[0], dims[1], dims[2]);
  if (name == "bf16_matmul" && dims.size() == 3) return bfloat16MatmulWorkload(dims[0], dims[1], dims[2]);
  return {};
}

}  // namespace tessel::testing
