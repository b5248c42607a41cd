// Einsum parsing, compute and default schedule.
#include "compiler/ops/Einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Labels: a letter's character code, or kEllipsis + position for the axes "..." stands for
// (right-aligned across operands, as numpy broadcasts them).
constexpr int kEllipsis = 256;

struct ParsedEquation {
  std::vector<std::vector<int>> inputs;  ///< Each operand's label per axis.
  std::vector<int> output;
  std::map<int, int64_t> extents;
};

Diagnostic einsumError(std::string message) {
  return Diagnostic{std::move(message), "einsum", 0, 0, "write it like \"bij,bjk->bik\""};
}

std::string labelName(int label) {
  return label >= kEllipsis ? "e" + std::to_string(label - kEllipsis) : std::string(1, char(label));
}

// One term's letters, with -1 where "..." stands.
Expected<std::vector<int>> parseTerm(const std::string& term) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis) return einsumError("\"...\" appears twice in the term '" + term + "'");
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      labels.push_back(int(term[i]));
    } else {
      return einsumError(std::string("unexpected character '") + term[i] + "' in the equation");
    }
  }
  return labels;
}

Expected<ParsedEquation> parse(const EinsumParams& p) {
  std::string equation;
  for (char c : p.equation)
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != p.shapes.size())
    return einsumError("the equation has " + std::to_string(terms.size()) + " operands, the node " +
                       std::to_string(p.shapes.size()));
  ParsedEquation parsed;
  size_t ellipsisRank = 0;
  std::vector<std::vector<int>> raw;
  for (size_t t = 0; t < terms.size(); ++t) {
    auto labels = parseTerm(terms[t]);
    if (!labels) return labels.error();
    size_t letters = size_t(std::count_if(labels->begin(), labels->end(), [](int l) { return l >= 0; }));
    bool hasEllipsis = letters != labels->size();
    if (p.shapes[t].size() < letters || (!hasEllipsis && p.shapes[t].size() != letters))
      return einsumError("operand " + std::to_string(t) + " has rank " + std::to_string(p.shapes[t].size()) +
                         " but its term '" + terms[t] + "' names " + std::to_string(letters) + " axes");
    ellipsisRank = std::max(ellipsisRank, p.shapes[t].size() - letters);
    raw.push_back(*labels);
  }
  // Expand "..." and collect extents.
  for (size_t t = 0; t < raw.size(); ++t) {
    std::vector<int> labels;
    size_t covered = p.shapes[t].size() - (raw[t].size() - size_t(std::count(raw[t].begin(), raw[t].end(), -1)));
    for (int l : raw[t]) {
      if (l >= 0) {
        labels.push_back(l);
        continue;
      }
      for (size_t e = ellipsisRank - covered; e < ellipsisRank; ++e) labels.push_back(kEllipsis + int(e));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      int64_t extent = p.shapes[t][d];
      if (extent < 1) return einsumError("operand " + std::to_string(t) + " has an empty axis: " + shapeName(p.shapes[t]));
      auto [it, inserted] = parsed.extents.emplace(labels[d], extent);
      if (inserted || it->second == extent) continue;
      bool broadcasts = labels[d] >= kEllipsis && (it->second == 1 || extent == 1);
      if (!broadcasts)
        return einsumError("axis '" + labelName(labels[d]) + "' has extents " + std::to_string(it->second) + " and " +
                           std::to_string(extent));
      it->second = std::max(it->second, extent);
    }
    parsed.inputs.push_back(labels);
  }
  if (arrow != std::string::npos) {
    auto out = parseTerm(equation.substr(arrow + 2));
    if (!out) return out.error();
    for (int l : *out) {
      if (l < 0) {
        for (size_t e = 0; e < ellipsisRank; ++e) parsed.output.push_back(kEllipsis + int(e));
        continue;
      }
      if (!parsed.extents.count(l)) return einsumError("output axis '" + labelName(l) + "' is on no operand");
      if (std::count(parsed.output.begin(), parsed.output.end(), l))
        return einsumError("output axis '" + labelName(l) + "' is listed twice");
      parsed.output.push_back(l);
    }
  } else {
    // Implicit output: the "..." axes, then the letters used exactly once, alphabetically.
    for (size_t e = 0; e < ellipsisRank; ++e) parsed.output.push_back(kEllipsis + int(e));
    std::map<int, int> uses;
    for (auto& labels : parsed.inputs)
      for (int l : labels) ++uses[l];
    for (auto [label, count] : uses)
      if (label < kEllipsis && count == 1) parsed.output.push_back(label);
  }
  return parsed;
}
}  // namespace

Expected<std::vector<int64_t>> einsumOutputShape(const EinsumParams& params) {
  auto parsed = parse(params);
  if (!parsed) return parsed.error();
  std::vector<int64_t> shape;
  for (int l : parsed->output) shape.push_back(parsed->extents.at(l));
  return shape;
}

Expected<Workload> einsum(const EinsumParams& params, DataType dtype) {
  auto parsed = parse(params);
  if (!parsed) return parsed.error();
  Workload w;
  for (size_t t = 0; t < params.shapes.size(); ++t)
    w.inputs.push_back(te::placeholder(toExprs(params.shapes[t]), dtype, "in" + std::to_string(t)));
  std::vector<int64_t> outShape;
  std::vector<std::string> names;
  for (int l : parsed->output) {
    outShape.push_back(parsed->extents.at(l));
    names.push_back(labelName(l));
  }
  std::map<int, IterVar> summed;
  std::vector<IterVar> reduceAxes;
  for (auto [label, extent] : parsed->extents)
    if (std::find(parsed->output.begin(), parsed->output.end(), label) == parsed->output.end()) {
      summed[label] = te::reduceAxis(Expr(extent), "r" + labelName(label));
      reduceAxes.push_back(summed[label]);
    }
  double products = double(elementCount(outShape));
  for (auto& axis : reduceAxes) products *= double(*asConstInt(axis->dom.extent));
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& at) {
        std::map<int, Expr> value;
        for (size_t o = 0; o < parsed->output.size(); ++o) value[parsed->output[o]] = at[o];
        for (auto& [label, axis] : summed) value[label] = axis.var();
        Expr product;
        for (size_t t = 0; t < w.inputs.size(); ++t) {
          std::vector<Expr> indices;
          for (size_t d = 0; d < parsed->inputs[t].size(); ++d) {
            int label = parsed->inputs[t][d];
            // A broadcast "..." axis of extent 1 reads its only element.
            bool broadcast = params.shapes[t][d] == 1 && parsed->extents.at(label) != 1;
            indices.push_back(broadcast ? Expr(int64_t(0)) : value.at(label));
          }
          Expr term = w.inputs[t](indices);
          product = product.defined() ? product * term : term;
        }
        return reduceAxes.empty() ? product : te::sum(product, reduceAxes);
      },
      "einsum", names, "einsum");
  std::string equation;
  for (char c : params.equation)
    if (std::isalpha(static_cast<unsigned char>(c))) equation += c;
    else if (c == ',' || c == '>') equation += '_';
    else if (c == '.') equation += 'E';
  w.name = "einsum_" + equation;
  for (auto& shape : params.shapes) w.name += "_" + shapeName(shape);
  w.outputs = {out};
  w.flops = products * double(w.inputs.size());
  return w;
}

Expected<Schedule> defaultEinsumSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  const Stage* stage = s.findStage("einsum");
  if (!stage) return Diagnostic{"the workload has no stage named 'einsum'", workload.name, 0, 0, ""};
  const auto* compute = te::asCompute(stage->op);
  if (target.cores > 1)
    for (const IterVar& axis : compute->axes)
      if (*asConstInt(axis->dom.extent) > 1) {
        if (Status st = s.parallel("einsum", axis.name()); !st) return st.error();
        break;
      }
  return s;
}

}  // namespace tessel
