// Einsums that are matrix products as MatMul (DecomposeEinsum.h).
#include "compiler/graph/DecomposeEinsum.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <optional>

#include "compiler/graph/TypedOperationBuilder.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {
namespace {

// "bhid,bhjd->bhij" as three strings of letters; nullopt for any other form.
std::optional<std::array<std::string, 3>> splitEquation(const std::string& equation) {
  std::string compact;
  for (char c : equation)
    if (c != ' ') compact += c;
  const size_t arrow = compact.find("->"), comma = compact.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return std::nullopt;
  std::array<std::string, 3> terms = {compact.substr(0, comma), compact.substr(comma + 1, arrow - comma - 1),
                                      compact.substr(arrow + 2)};
  for (const std::string& term : terms) {
    std::string sorted = term;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return std::nullopt;  // a diagonal
    for (char c : term)
      if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;  // "..." and stray characters
  }
  return terms;
}

bool has(const std::string& term, char letter) { return term.find(letter) != std::string::npos; }

class Decomposer : public TypedOperationBuilder {
public:
  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (error_ || op.op != "Einsum" || inputs.size() != 2) return std::nullopt;
    auto terms = splitEquation(op.attribute<std::string>("equation", ""));
    if (!terms) return std::nullopt;
    // Plain references, not a structured binding: the lambdas below capture them (clang
    // before 16 cannot capture a structured binding).
    const std::string &a = (*terms)[0], &b = (*terms)[1], &out = (*terms)[2];
    const auto &shapeA = inputs[0].type().shape, &shapeB = inputs[1].type().shape;
    if (shapeA.size() != a.size() || shapeB.size() != b.size()) return std::nullopt;
    std::string batch, rows, columns, summed;
    for (char c : a) {
      if (has(b, c) && has(out, c)) batch += c;
      else if (has(b, c)) summed += c;
      else if (has(out, c)) rows += c;
      else return std::nullopt;  // summed within A alone
    }
    for (char c : b)
      if (!has(a, c)) {
        if (!has(out, c)) return std::nullopt;
        columns += c;
      }
    for (char c : out)
      if (!has(a, c) && !has(b, c)) return std::nullopt;
    auto size = [&](char c) { return has(a, c) ? shapeA[a.find(c)] : shapeB[b.find(c)]; };
    for (char c : batch + summed)
      if (shapeA[a.find(c)] != shapeB[b.find(c)]) return std::nullopt;  // broadcast: the Einsum kernel's
    auto product = [&](const std::string& letters) {
      int64_t n = 1;
      for (char c : letters) n *= size(c);
      return n;
    };
    std::vector<int64_t> batchShape;
    for (char c : batch) batchShape.push_back(size(c));
    auto withBatch = [&](std::vector<int64_t> tail) {
      std::vector<int64_t> shape = batchShape;
      shape.insert(shape.end(), tail.begin(), tail.end());
      return shape;
    };
    auto left = arrange(op, inputs[0], a, batch + rows + summed, withBatch({product(rows), product(summed)}), "a");
    if (!left) return std::nullopt;
    auto right = arrange(op, inputs[1], b, batch + summed + columns, withBatch({product(summed), product(columns)}), "b");
    if (!right) return std::nullopt;
    auto matmul = typed(op.name + "/matmul", "MatMul", {*left, *right}, {}, op.provenance);
    if (!matmul) return std::nullopt;
    std::vector<int64_t> unfolded = batchShape;
    for (char c : rows + columns) unfolded.push_back(size(c));
    auto result = arrangeResult(op, *matmul, batch + rows + columns, out, unfolded);
    if (!result) return std::nullopt;
    if (!(result->type() == op.outputTypes[0])) {
      error_ = Diagnostic{"decomposing Einsum '" + op.name + "' gave " + result->type().toString() + " instead of " +
                              op.outputTypes[0].toString(),
                          op.name, 0, 0, ""};
      return std::nullopt;
    }
    return std::vector<Value>{*result};
  }

private:
  // `value` (letters `from`) transposed to the letters `to`, then reshaped to `shape`.
  std::optional<Value> arrange(const OperationNode& op, Value value, const std::string& from, const std::string& to,
                               const std::vector<int64_t>& shape, const std::string& operand) {
    auto transposed = transpose(op, value, from, to, op.name + "/" + operand + "_transpose");
    if (!transposed) return std::nullopt;
    return reshape(op, *transposed, shape, op.name + "/" + operand + "_reshape");
  }

  // The MatMul's [batch.., M, N] unfolded to [batch.., M.., N..] (letters `from`), then
  // transposed to the output's letters.
  std::optional<Value> arrangeResult(const OperationNode& op, Value value, const std::string& from,
                                     const std::string& to, const std::vector<int64_t>& unfolded) {
    auto reshaped = reshape(op, value, unfolded, op.name + "/unfold");
    if (!reshaped) return std::nullopt;
    return transpose(op, *reshaped, from, to, op.name + "/transpose");
  }

  std::optional<Value> transpose(const OperationNode& op, Value value, const std::string& from, const std::string& to,
                                 const std::string& name) {
    if (from == to) return value;
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(int64_t(from.find(c)));
    return typed(name, "Transpose", {value}, {{"perm", perm}}, op.provenance);
  }

  std::optional<Value> reshape(const OperationNode& op, Value value, const std::vector<int64_t>& shape,
                               const std::string& name) {
    if (value.type().shape == shape) return value;
    return typed(name, "Reshape", {value, int64s(name + ".shape", shape)}, {}, op.provenance);
  }

};

}  // namespace

Expected<Graph> decomposeEinsum(const Graph& graph) {
  Decomposer decomposer;
  return rewriteGraphWith(graph, decomposer);
}

}  // namespace tessel::graph
