// Det (the determinant of square matrices) and TfIdfVectorizer (n-gram counts of integer
// token sequences, weighted as TF, IDF or TF-IDF).
#include <algorithm>
#include <numeric>

#include "compiler/opdefs/SignalVisionSupport.h"
#include "core/ir/IROperators.h"

namespace tessel::graph::signal_vision {

namespace {

using Shape = std::vector<int64_t>;

// ---- Det -----------------------------------------------------------------------------------

/// Det's matrices are expanded as the Leibniz sum over permutations, one expression per
/// output element: TE has no pivoting loop, and the sum is exact in structure for the small
/// matrices models use Det on (rotations, affine transforms). 5! = 120 terms of 5 factors.
constexpr int64_t kMaxDeterminantSize = 5;

Expected<OpKernel> buildDet(const OpCall& call) {
  const TensorType& input = call.inputTypes[0];
  if (!input.dtype.isFloat()) return call.error("input 0 must be floating point, got " + input.dtype.toString());
  size_t rank = input.shape.size();
  if (rank < 2 || input.shape[rank - 1] != input.shape[rank - 2])
    return call.error("input 0 must be [..., M, M], got " + input.toString());
  int64_t size = input.shape[rank - 1];
  if (size > kMaxDeterminantSize)
    return call.error("Det of " + std::to_string(size) + "x" + std::to_string(size) + " matrices is not supported",
                      "Tessel expands determinants of matrices up to " + std::to_string(kMaxDeterminantSize) +
                          "x" + std::to_string(kMaxDeterminantSize));
  Shape batchShape(input.shape.begin(), input.shape.end() - 2);

  Workload w;
  w.name = "det_" + shapeName(input.shape);
  te::Tensor x = te::placeholder(toExprs(input.shape), input.dtype, "input");
  w.inputs = {x};
  DataType f = DataType::float64();
  w.outputs = {te::compute(
      toExprs(batchShape),
      [&](const std::vector<Var>& axes) {
        std::vector<int64_t> permutation(size_t(size), 0);
        std::iota(permutation.begin(), permutation.end(), 0);
        Expr total;
        do {
          // The sign is the parity of the permutation's inversions.
          int inversions = 0;
          for (size_t i = 0; i < permutation.size(); ++i)
            for (size_t j = i + 1; j < permutation.size(); ++j) inversions += permutation[i] > permutation[j];
          Expr product = FloatImmNode::make(f, inversions % 2 ? -1.0 : 1.0);
          for (int64_t row = 0; row < size; ++row) {
            std::vector<Expr> index = asExprs(axes);
            index.push_back(indexConst(row));
            index.push_back(indexConst(permutation[size_t(row)]));
            product = product * cast(f, x(index));
          }
          total = total.defined() ? total + product : product;
        } while (std::next_permutation(permutation.begin(), permutation.end()));
        return cast(input.dtype, total);
      },
      "out", axisNames(batchShape.size()), "det")};
  return opaqueKernel(call, std::move(w), {0});
}

// ---- TfIdfVectorizer -----------------------------------------------------------------------

enum class TfIdfMode { TermFrequency, InverseDocumentFrequency, Both };

/// One n-gram of the pool, the output column it counts into and its weight.
struct NGram {
  std::vector<int64_t> tokens;
  int64_t column = 0;
  double weight = 1.0;
};

struct TfIdfParams {
  std::vector<NGram> ngrams;  ///< Those whose length is within [min_gram_length, max_gram_length].
  int64_t columns = 0;        ///< max(ngram_indexes) + 1.
  int64_t maxSkip = 0;
  TfIdfMode mode = TfIdfMode::TermFrequency;
};

Expected<TfIdfParams> tfIdfParams(const OpCall& call) {
  TfIdfParams p;
  if (call.hasAttr("pool_strings"))
    return call.error("string n-gram pools are not supported", "Tessel has no string tensors; use pool_int64s");
  auto mode = call.stringAttr("mode", "");
  if (!mode) return mode.error();
  if (*mode == "TF") p.mode = TfIdfMode::TermFrequency;
  else if (*mode == "IDF") p.mode = TfIdfMode::InverseDocumentFrequency;
  else if (*mode == "TFIDF") p.mode = TfIdfMode::Both;
  else return call.error("mode '" + *mode + "' is not one of TF, IDF, TFIDF");
  auto minLength = call.intAttr("min_gram_length", 1);
  if (!minLength) return minLength.error();
  auto maxLength = call.intAttr("max_gram_length", 1);
  if (!maxLength) return maxLength.error();
  auto maxSkip = call.intAttr("max_skip_count", 0);
  if (!maxSkip) return maxSkip.error();
  auto counts = call.intsAttr("ngram_counts", {});
  if (!counts) return counts.error();
  auto indexes = call.intsAttr("ngram_indexes", {});
  if (!indexes) return indexes.error();
  auto pool = call.intsAttr("pool_int64s", {});
  if (!pool) return pool.error();
  auto weights = call.floatsAttr("weights", {});
  if (!weights) return weights.error();
  if (*minLength < 1 || *maxLength < *minLength || *maxSkip < 0)
    return call.error("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  p.maxSkip = *maxSkip;
  if (!weights->empty() && weights->size() != indexes->size())
    return call.error("weights has " + std::to_string(weights->size()) + " entries, ngram_indexes " +
                      std::to_string(indexes->size()), "give one weight per n-gram of the pool");

  // ngram_counts[i] is where the n-grams of length i + 1 start in the pool.
  int64_t ordinal = 0;
  for (size_t level = 0; level < counts->size(); ++level) {
    int64_t length = int64_t(level) + 1;
    int64_t begin = (*counts)[level];
    int64_t end = level + 1 < counts->size() ? (*counts)[level + 1] : int64_t(pool->size());
    if (begin < 0 || end < begin || end > int64_t(pool->size()) || (end - begin) % length != 0)
      return call.error("ngram_counts does not split the pool into n-grams of lengths 1, 2, ...");
    for (int64_t start = begin; start < end; start += length, ++ordinal) {
      if (ordinal >= int64_t(indexes->size()))
        return call.error("ngram_indexes has fewer entries than the pool has n-grams");
      NGram gram;
      gram.tokens.assign(pool->begin() + start, pool->begin() + start + length);
      gram.column = (*indexes)[size_t(ordinal)];
      // The i-th weight belongs to the i-th n-gram of the pool.
      if (!weights->empty()) gram.weight = (*weights)[size_t(ordinal)];
      if (gram.column < 0) return call.error("ngram_indexes holds a negative column");
      p.columns = std::max(p.columns, gram.column + 1);
      if (length >= *minLength && length <= *maxLength) p.ngrams.push_back(std::move(gram));
    }
  }
  if (p.columns == 0) return call.error("the n-gram pool is empty");
  return p;
}

/// Each n-gram is one reduction stage counting its occurrences per row: over start positions
/// and skip distances (a skip of k puts k tokens between consecutive n-gram tokens; a unigram
/// counts once whatever the skip). The output weights each count by its mode (TF: the count,
/// IDF: the n-gram's weight where it occurs, TFIDF: their product) and sums a column's n-grams.
Expected<OpKernel> buildTfIdfVectorizer(const OpCall& call) {
  const TensorType& input = call.inputTypes[0];
  if (!input.dtype.isIntegral())
    return call.error("input 0 must hold integer tokens, got " + input.dtype.toString(),
                      "string tokens are not supported");
  if (input.shape.size() != 1 && input.shape.size() != 2)
    return call.error("input 0 must be [C] or [N, C], got " + input.toString());
  auto p = tfIdfParams(call);
  if (!p) return p.error();
  bool batched = input.shape.size() == 2;
  int64_t rows = batched ? input.shape[0] : 1;
  int64_t tokens = input.shape.back();

  Workload w;
  w.name = "tfidf_" + shapeName(input.shape) + "_" + std::to_string(p->columns);
  te::Tensor x = te::placeholder(toExprs(input.shape), input.dtype, "tokens");
  w.inputs = {x};
  DataType f = DataType::float32();
  auto tokenAt = [&](const Expr& row, const Expr& position) {
    return batched ? x({row, position}) : x({position});
  };
  // The count stages of the n-grams writing each column, with their weights.
  std::vector<std::vector<std::pair<te::Tensor, double>>> countsByColumn(size_t(p->columns));
  for (size_t g = 0; g < p->ngrams.size(); ++g) {
    const NGram& gram = p->ngrams[g];
    int64_t length = int64_t(gram.tokens.size());
    int64_t skips = length == 1 ? 1 : p->maxSkip + 1;
    IterVar start = te::reduceAxis(indexConst(tokens), "s");
    IterVar skip = te::reduceAxis(indexConst(skips), "k");
    te::Tensor count = te::compute(
        toExprs({rows}),
        [&](const std::vector<Var>& axes) {
          Expr stride = Expr(skip->var) + indexConst(1);
          Expr last = Expr(start->var) + indexConst(length - 1) * stride;
          Expr matches;
          for (int64_t t = 0; t < length; ++t) {
            // Clamped so an n-gram running past the row reads in bounds; the condition drops it.
            Expr position = min(Expr(start->var) + indexConst(t) * stride, indexConst(tokens - 1));
            Expr same = eq(cast(DataType::int64(), tokenAt(axes[0], position)),
                           IntImmNode::make(DataType::int64(), gram.tokens[size_t(t)]));
            matches = matches.defined() ? (matches && same) : same;
          }
          return te::sum(select(matches, FloatImmNode::make(f, 1.0), FloatImmNode::make(f, 0.0)), {start, skip},
                         last < indexConst(tokens));
        },
        "count" + std::to_string(g), {"row"}, "tfidf");
    countsByColumn[size_t(gram.column)].emplace_back(count, gram.weight);
  }

  Shape outShape = batched ? Shape{rows, p->columns} : Shape{p->columns};
  TfIdfParams params = *p;
  w.outputs = {te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& axes) {
        Expr row = batched ? Expr(axes[0]) : indexConst(0);
        Expr column = axes.back();
        Expr value = FloatImmNode::make(f, 0.0);
        for (int64_t c = 0; c < params.columns; ++c) {
          const auto& stages = countsByColumn[size_t(c)];
          if (stages.empty()) continue;
          Expr total;
          for (const auto& [stage, weightValue] : stages) {
            Expr count = stage({row}), weight = FloatImmNode::make(f, weightValue);
            Expr weighted = params.mode == TfIdfMode::TermFrequency ? count
                            : params.mode == TfIdfMode::Both
                                ? count * weight
                                : select(count > FloatImmNode::make(f, 0.0), weight, FloatImmNode::make(f, 0.0));
            total = total.defined() ? total + weighted : weighted;
          }
          value = select(eq(column, indexConst(c)), total, value);
        }
        return value;
      },
      "out", axisNames(outShape.size()), "tfidf")};
  return opaqueKernel(call, std::move(w), {0});
}

}  // namespace

void registerTextAndAlgebraOps(OpRegistry& registry) {
  registry.add(kernelTypedOpaqueOp("Det", 1, 1, {}, buildDet));
  registry.add(kernelTypedOpaqueOp("TfIdfVectorizer", 1, 1, {}, buildTfIdfVectorizer));
}

}  // namespace tessel::graph::signal_vision
