// ONNX's recurrent operators (LSTM, GRU, RNN) expanded into graph operations unrolled over time.
#include "compiler/frontend/onnx/OnnxRecurrent.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "compiler/frontend/onnx/OnnxAttributes.h"
#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxModelFile.h"
#include "compiler/frontend/onnx/OnnxTensor.h"
#include "compiler/graph/InferTypes.h"

namespace tessel::frontend {
namespace {

using graph::Attributes;
using graph::TensorType;
using graph::Value;
using Ints = std::vector<int64_t>;

// The inputs in ONNX order (initial_c and P are LSTM's only).
enum Input : size_t { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kPeepholes };
const char* const kInputNames[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};

enum class Cell { LSTM, GRU, RNN };

/// What tells the three operators apart besides their step.
struct CellShape {
  int gates;        ///< Blocks of hidden_size rows in W and R.
  int activations;  ///< Activation functions per direction.
  size_t maxInputs, maxOutputs;
  const char* gateOrder;  ///< For messages: the gates' order in W, R and B.
  std::vector<std::string> defaultActivations;
};

CellShape shapeOf(Cell cell) {
  switch (cell) {
    case Cell::LSTM: return {4, 3, 8, 3, "input, output, forget and cell", {"Sigmoid", "Tanh", "Tanh"}};
    case Cell::GRU: return {3, 2, 6, 2, "update, reset and hidden", {"Sigmoid", "Tanh"}};
    case Cell::RNN: return {1, 1, 6, 2, "hidden", {"Tanh"}};
  }
  return {};
}

/// An activation function of the recurrent operators: which parameters it takes and their
/// defaults (those of the ONNX operator of the same name; Affine and ScaledTanh have none,
/// so the identity's).
struct ActivationRule {
  const char* name;
  bool takesAlpha, takesBeta;
  double alpha, beta;
};
const ActivationRule kActivationRules[] = {
    {"Relu", false, false, 0, 0},         {"Tanh", false, false, 0, 0},
    {"Sigmoid", false, false, 0, 0},      {"Affine", true, true, 1.0, 0.0},
    {"LeakyRelu", true, false, 0.01, 0},  {"ThresholdedRelu", true, false, 1.0, 0},
    {"ScaledTanh", true, true, 1.0, 1.0}, {"HardSigmoid", true, true, 0.2, 0.5},
    {"Elu", true, false, 1.0, 0},         {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0},
};

struct Activation {
  std::string name;  ///< As in kActivationRules.
  double alpha = 0, beta = 0;
};

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

std::string activationNames() {
  std::string names;
  for (const auto& rule : kActivationRules) names += (names.empty() ? "" : ", ") + std::string(rule.name);
  return names;
}

// The recurrent state of one direction between steps. An absent initial state is zero, and a
// zero state needs no operations (no recurrent MatMul at the first step).
struct State {
  Value h, c;  ///< Undefined while zero.
};

class RecurrentExpander {
public:
  explicit RecurrentExpander(const RecurrentNode& node)
      : node_(node), provenance_{graph::Provenance{node.name, node.opType, node.opset}} {}

  Expected<std::vector<Value>> run(const std::vector<Value>& graphInputs) {
    for (auto step : {&RecurrentExpander::readArity, &RecurrentExpander::readAttributes,
                      &RecurrentExpander::readActivations})
      if (auto problem = (this->*step)()) return *problem;
    if (auto problem = typeInputs(graphInputs)) return *problem;
    if (auto problem = checkShapes()) return *problem;
    return build();
  }

private:
  // ---- reading and checking the node ----

  Diagnostic error(const std::string& problem, const std::string& hint = "") const {
    return importError(problem, "", hint);
  }

  bool has(Input input) const { return input < node_.inputs.size() && node_.inputs[input].defined(); }
  const Value& input(Input input) const { return node_.inputs[input]; }

  std::optional<Diagnostic> readArity() {
    if (node_.opType == "LSTM") cell_ = Cell::LSTM;
    else if (node_.opType == "GRU") cell_ = Cell::GRU;
    else cell_ = Cell::RNN;
    shape_ = shapeOf(cell_);
    if (node_.inputs.size() < 3 || node_.inputs.size() > shape_.maxInputs)
      return error("has " + std::to_string(node_.inputs.size()) + " inputs; " + node_.opType + " takes 3 to " +
                   std::to_string(shape_.maxInputs));
    for (Input required : {kX, kW, kR})
      if (!has(required))
        return error("omits input " + std::string(kInputNames[required]) + ", which " + node_.opType + " requires");
    if (node_.outputsUsed.empty() || node_.outputsUsed.size() > shape_.maxOutputs)
      return error("has " + std::to_string(node_.outputsUsed.size()) + " outputs; " + node_.opType + " has 1 to " +
                   std::to_string(shape_.maxOutputs));
    return std::nullopt;
  }

  // The attribute `key` into `out` when present; a present attribute of another kind is an
  // error (an integer where a float belongs is taken, as is an empty list of any kind).
  template <class T>
  std::optional<Diagnostic> attribute(const std::string& key, T& out, const char* kind) const {
    auto it = node_.attributes.find(key);
    if (it == node_.attributes.end()) return std::nullopt;
    if (auto* value = std::get_if<T>(&it->second)) {
      out = *value;
      return std::nullopt;
    }
    if constexpr (std::is_same_v<T, double>) {
      if (auto* value = std::get_if<int64_t>(&it->second)) {
        out = double(*value);
        return std::nullopt;
      }
    } else if constexpr (!std::is_same_v<T, int64_t> && !std::is_same_v<T, std::string>) {
      if (auto* empty = std::get_if<Ints>(&it->second); empty && empty->empty()) {
        out = T{};
        return std::nullopt;
      }
    }
    return error("has attribute '" + key + "' = " + graph::attributeToString(it->second) + ", which is not " + kind);
  }

  std::optional<Diagnostic> readAttributes() {
    std::string direction = "forward";
    int64_t layout = 0, inputForget = 0, linearBeforeReset = 0;
    if (auto p = attribute("direction", direction, "a string")) return p;
    if (auto p = attribute("layout", layout, "an integer")) return p;
    if (auto p = attribute("input_forget", inputForget, "an integer")) return p;
    if (auto p = attribute("linear_before_reset", linearBeforeReset, "an integer")) return p;
    if (direction == "forward" || direction == "reverse") {
      directions_ = 1;
      reverseOnly_ = direction == "reverse";
    } else if (direction == "bidirectional") {
      directions_ = 2;
    } else {
      return error("has direction '" + direction + "'", "use forward, reverse or bidirectional");
    }
    if (layout != 0 && layout != 1)
      return error("has layout " + std::to_string(layout),
                   "use 0 (X is [seq_length, batch_size, input_size]) or 1 (X is [batch_size, seq_length, input_size])");
    batchMajor_ = layout == 1;
    inputForget_ = inputForget != 0;
    linearBeforeReset_ = linearBeforeReset != 0;
    if (node_.attributes.count("clip")) {
      double clip = 0;
      if (auto p = attribute("clip", clip, "a float")) return p;
      if (!(clip > 0)) return error("has clip " + std::to_string(clip), "clip bounds to [-clip, clip]: give a positive threshold or leave it out");
      clip_ = clip;
    }
    if (node_.attributes.count("hidden_size")) {
      int64_t hidden = 0;
      if (auto p = attribute("hidden_size", hidden, "an integer")) return p;
      if (hidden <= 0) return error("has hidden_size " + std::to_string(hidden), "give the number of hidden units, a positive integer");
      declaredHidden_ = hidden;
    }
    return std::nullopt;
  }

  std::optional<Diagnostic> readActivations() {
    std::vector<std::string> names;
    std::vector<double> alphas, betas;
    if (auto p = attribute("activations", names, "a list of strings")) return p;
    if (auto p = attribute("activation_alpha", alphas, "a list of floats")) return p;
    if (auto p = attribute("activation_beta", betas, "a list of floats")) return p;
    size_t perDirection = size_t(shape_.activations);
    if (names.empty()) {
      names = shape_.defaultActivations;
    } else if (names.size() != perDirection && names.size() != perDirection * size_t(directions_)) {
      std::string needed = std::to_string(perDirection) + (directions_ == 2 ? " per direction (" +
                                                               std::to_string(2 * perDirection) + " in all)" : "");
      return error("lists " + std::to_string(names.size()) + " activations; " + node_.opType + " takes " + needed,
                   "list them forward direction first: " + joined(shape_.defaultActivations) + " are the defaults");
    }
    // One list for both directions when it names only one direction's functions.
    if (names.size() == perDirection && directions_ == 2) {
      std::vector<std::string> forward = names;
      names.insert(names.end(), forward.begin(), forward.end());
    }
    // Alphas and betas go, in order, to the functions that take one (as onnxruntime reads them).
    size_t nextAlpha = 0, nextBeta = 0;
    for (const std::string& name : names) {
      const ActivationRule* rule = nullptr;
      for (const auto& candidate : kActivationRules)
        if (lowercase(candidate.name) == lowercase(name)) rule = &candidate;
      if (!rule)
        return error("has activation '" + name + "', which is not one of the recurrent operators' functions",
                     "use one of " + activationNames());
      Activation activation{rule->name, rule->alpha, rule->beta};
      if (rule->takesAlpha && nextAlpha < alphas.size()) activation.alpha = alphas[nextAlpha++];
      if (rule->takesBeta && nextBeta < betas.size()) activation.beta = betas[nextBeta++];
      activations_.push_back(activation);
    }
    return std::nullopt;
  }

  static std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  // The type of every input; values the importer has not typed yet (operation outputs) are
  // typed by inferring the graph that leads to them.
  std::optional<Diagnostic> typeInputs(const std::vector<Value>& graphInputs) {
    types_.assign(node_.inputs.size(), TensorType{});
    graph::Graph prefix;
    prefix.inputs = graphInputs;
    std::vector<size_t> slots;
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const Value& value = node_.inputs[i];
      if (!value.defined()) continue;
      if (value.type().known()) {
        types_[i] = value.type();
        continue;
      }
      prefix.outputs.push_back(value);
      prefix.outputNames.push_back(kInputNames[i]);
      slots.push_back(i);
    }
    if (slots.empty()) return std::nullopt;
    auto typed = graph::inferTypes(prefix);
    if (!typed)
      return error("cannot be expanded because the types of its inputs are unknown: " + typed.error().message,
                   typed.error().hint);
    for (size_t k = 0; k < slots.size(); ++k) types_[slots[k]] = typed->outputs[k].type();
    return std::nullopt;
  }

  std::optional<Diagnostic> shapeError(Input which, const Ints& expected, const std::string& meaning) const {
    return error("has " + std::string(kInputNames[which]) + " of shape " + shapeText(types_[which].shape) + "; " +
                     node_.opType + " needs " + meaning + " = " + shapeText(expected),
                 std::string(kInputNames[which]) + " holds the " + shape_.gateOrder + " gates' parameters of each direction" +
                     (which == kW ? "; hidden_size and the input size fix its shape" : ""));
  }

  std::optional<Diagnostic> checkShapes() {
    const TensorType& x = types_[kX];
    dtype_ = x.dtype;
    if (x.shape.size() != 3)
      return error("has X of shape " + shapeText(x.shape) + "; " + node_.opType + " needs a rank-3 X",
                   batchMajor_ ? "layout 1: [batch_size, seq_length, input_size]"
                               : "layout 0: [seq_length, batch_size, input_size]");
    if (dtype_ != DataType::float32() && dtype_ != DataType::float64())
      return error("has X of element type " + dtype_.toString() + "; Tessel expands " + node_.opType +
                       " in float32 and float64 only",
                   "convert the model to float32");
    steps_ = batchMajor_ ? x.shape[1] : x.shape[0];
    batch_ = batchMajor_ ? x.shape[0] : x.shape[1];
    inputSize_ = x.shape[2];
    if (steps_ < 1)
      return error("reads a sequence of length " + std::to_string(steps_) + "; Tessel expands recurrent operators over at least one step");
    for (size_t i = kW; i < node_.inputs.size(); ++i)
      if (has(Input(i)) && i != kSequenceLens && types_[i].dtype != dtype_)
        return error("has " + std::string(kInputNames[i]) + " of element type " + types_[i].dtype.toString() + " and X of " +
                     dtype_.toString(), "give every input but sequence_lens X's element type");
    const int64_t gates = shape_.gates, d = directions_;
    const Ints& w = types_[kW].shape;
    hidden_ = declaredHidden_ ? *declaredHidden_ : (w.size() == 3 && w[1] % gates == 0 ? w[1] / gates : 0);
    const std::string gatesText = gates == 1 ? "" : std::to_string(gates) + "*";
    if (w != Ints{d, gates * hidden_, inputSize_})
      return shapeError(kW, {d, gates * hidden_, inputSize_},
                        "[num_directions, " + gatesText + "hidden_size, input_size]");
    if (types_[kR].shape != Ints{d, gates * hidden_, hidden_})
      return shapeError(kR, {d, gates * hidden_, hidden_}, "[num_directions, " + gatesText + "hidden_size, hidden_size]");
    if (has(kB) && types_[kB].shape != Ints{d, 2 * gates * hidden_})
      return shapeError(kB, {d, 2 * gates * hidden_}, "[num_directions, " + std::to_string(2 * gates) + "*hidden_size]");
    if (has(kSequenceLens)) {
      const TensorType& lens = types_[kSequenceLens];
      if (!lens.dtype.isIntegral() || lens.shape != Ints{batch_})
        return error("has sequence_lens of type " + lens.toString() + "; it must hold one integer per batch entry (" +
                         std::to_string(batch_) + ")",
                     "give an int32 tensor of shape [batch_size], or leave it out for full-length sequences");
    }
    Ints stateShape = batchMajor_ ? Ints{batch_, d, hidden_} : Ints{d, batch_, hidden_};
    std::string stateMeaning = batchMajor_ ? "[batch_size, num_directions, hidden_size]" : "[num_directions, batch_size, hidden_size]";
    for (Input state : {kInitialH, kInitialC})
      if (has(state) && types_[state].shape != stateShape) return shapeError(state, stateShape, stateMeaning);
    if (has(kPeepholes) && types_[kPeepholes].shape != Ints{d, 3 * hidden_})
      return shapeError(kPeepholes, {d, 3 * hidden_}, "[num_directions, 3*hidden_size]");
    return std::nullopt;
  }

  // ---- building blocks ----

  std::string uniqueName(const std::string& suffix) {
    std::string name = node_.name + "/" + suffix;
    for (int n = 2; !names_.insert(name).second; ++n) name = node_.name + "/" + suffix + "#" + std::to_string(n);
    return name;
  }

  std::vector<Value> operations(const std::string& suffix, const std::string& op, std::vector<Value> inputs,
                                Attributes attributes, size_t outputs) {
    return graph::makeOperation(uniqueName(suffix), op, std::move(inputs), std::move(attributes),
                                std::vector<TensorType>(outputs), provenance_);
  }
  Value operation(const std::string& suffix, const std::string& op, std::vector<Value> inputs,
                  Attributes attributes = {}) {
    return operations(suffix, op, std::move(inputs), std::move(attributes), 1)[0];
  }

  runtime::NDArray floatArray(const Ints& shape, const std::vector<double>& values) const {
    auto array = runtime::NDArray::empty(shape, toRuntimeType(dtype_));
    if (dtype_ == DataType::float64()) {
      std::copy(values.begin(), values.end(), static_cast<double*>(array.data()));
    } else {
      auto* out = static_cast<float*>(array.data());
      for (size_t i = 0; i < values.size(); ++i) out[i] = float(values[i]);
    }
    return array;
  }
  Value constant(const std::string& suffix, const Ints& shape, const std::vector<double>& values) {
    return graph::makeConstant(uniqueName(suffix), floatArray(shape, values));
  }
  Value scalar(double value) {
    auto it = scalars_.find(value);
    if (it != scalars_.end()) return it->second;
    return scalars_[value] = constant("scalar", {}, {value});
  }
  Value shapeConstant(const Ints& dims) {
    auto array = runtime::NDArray::empty({int64_t(dims.size())}, runtime::DataType::int64());
    std::copy(dims.begin(), dims.end(), static_cast<int64_t*>(array.data()));
    return graph::makeConstant(uniqueName("shape"), array);
  }
  Value reshape(const std::string& suffix, const Value& value, const Ints& dims) {
    return operation(suffix, "Reshape", {value, shapeConstant(dims)});
  }
  Value slice(const std::string& suffix, const Value& value, const Ints& starts, const Ints& ends, const Ints& axes) {
    return operation(suffix, "Slice", {value}, {{"starts", starts}, {"ends", ends}, {"axes", axes}});
  }
  Value zeros() {
    if (!zeros_.defined())
      zeros_ = constant("zeros", {batch_, hidden_}, std::vector<double>(size_t(batch_ * hidden_), 0.0));
    return zeros_;
  }

  // Input `which`'s elements when the importer already knows them (an initializer, a Constant
  // node, a bound input); the weights are prepared here then, not by kernels at compile time.
  std::optional<std::vector<double>> knownElements(Input which) const {
    const Value& value = input(which);
    auto* constant = value.index() == 0 ? graph::asConstant(value.node()) : nullptr;
    if (!constant) return std::nullopt;
    return arrayToDoubles(constant->data);
  }

  // Rows [g0, g1) gates of W or R for direction d, transposed: [input or hidden, (g1-g0)*hidden].
  Value transposedWeights(Input which, int d, int g0, int g1, const std::string& suffix) {
    const int64_t rows = (g1 - g0) * hidden_, columns = types_[which].shape[2];
    if (auto known = knownElements(which)) {
      std::vector<double> transposed(size_t(rows * columns));
      const int64_t first = (d * shape_.gates + g0) * hidden_;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < columns; ++c)
          transposed[size_t(c * rows + r)] = (*known)[size_t((first + r) * columns + c)];
      return constant(suffix, {columns, rows}, transposed);
    }
    Value rowsOf = slice(suffix + ".rows", input(which), {d, g0 * hidden_}, {d + 1, g1 * hidden_}, {0, 1});
    return operation(suffix, "Transpose", {reshape(suffix + ".matrix", rowsOf, {rows, columns})}, {{"perm", Ints{1, 0}}});
  }

  // The bias of gates [g0, g1) for direction d as [1, (g1-g0)*hidden]: W's part (withW) plus
  // R's part for the gates before rEnd; undefined without B or when neither part is asked for.
  Value bias(int d, int g0, int g1, bool withW, int rEnd, const std::string& suffix) {
    rEnd = std::clamp(rEnd, g0, g1);
    if (!has(kB) || (!withW && rEnd == g0)) return {};
    const int64_t length = (g1 - g0) * hidden_, rLength = (rEnd - g0) * hidden_;
    const int64_t wStart = g0 * hidden_, rStart = (shape_.gates + g0) * hidden_;  // within direction d's row
    if (auto known = knownElements(kB)) {
      const size_t row = size_t(d * 2 * shape_.gates * hidden_);
      std::vector<double> sum(size_t(length), 0.0);
      for (int64_t i = 0; i < length; ++i)
        sum[size_t(i)] = (withW ? (*known)[row + size_t(wStart + i)] : 0.0) +
                         (i < rLength ? (*known)[row + size_t(rStart + i)] : 0.0);
      return constant(suffix, {1, length}, sum);
    }
    Value w = withW ? slice(suffix + ".W", input(kB), {d, wStart}, {d + 1, wStart + length}, {0, 1}) : Value();
    Value r;
    if (rLength > 0) {
      r = slice(suffix + ".R", input(kB), {d, rStart}, {d + 1, rStart + rLength}, {0, 1});
      if (rLength < length) {
        Value none = constant(suffix + ".R.none", {1, length - rLength}, std::vector<double>(size_t(length - rLength), 0.0));
        r = operation(suffix + ".R.padded", "Concat", {r, none}, {{"axis", int64_t(1)}});
      }
    }
    if (!w.defined()) return r;
    if (!r.defined()) return w;
    return operation(suffix, "Add", {w, r});
  }

  // Peephole k (0: input, 1: output, 2: forget) of direction d as [1, hidden].
  Value peephole(int d, int k, const std::string& suffix) {
    if (auto known = knownElements(kPeepholes)) {
      auto first = known->begin() + (d * 3 + k) * hidden_;
      return constant(suffix, {1, hidden_}, std::vector<double>(first, first + hidden_));
    }
    return slice(suffix, input(kPeepholes), {d, k * hidden_}, {d + 1, (k + 1) * hidden_}, {0, 1});
  }

  // Initial state `which` of direction d as [batch, hidden]; undefined when absent (zero).
  Value initialState(Input which, int d, const std::string& suffix) {
    if (!has(which)) return {};
    Value state = input(which);
    if (directions_ == 2)
      state = batchMajor_ ? slice(suffix + ".slice", state, {d}, {d + 1}, {1}) : slice(suffix + ".slice", state, {d}, {d + 1}, {0});
    return reshape(suffix, state, {batch_, hidden_});
  }

  // For every time step, the input projection of gates [g0, g1) with its bias: [batch, (g1-g0)*hidden].
  // One MatMul over all steps; a Split hands each step its rows.
  // R's bias joins it for the gates before rEnd.
  std::vector<Value> project(const Value& rows, int d, int g0, int g1, int rEnd, const std::string& prefix) {
    std::string name = prefix + "x" + (g1 - g0 == shape_.gates ? "" : "." + std::to_string(g0));
    Value projected = operation(name + ".matmul", "MatMul", {rows, transposedWeights(kW, d, g0, g1, name + ".W")});
    Value b = bias(d, g0, g1, true, rEnd, name + ".bias");
    if (b.defined()) projected = operation(name, "Add", {projected, b});
    if (steps_ == 1) return {projected};
    return operations(name + ".steps", "Split", {projected}, {{"axis", int64_t(0)}}, size_t(steps_));
  }

  // One step's masks, [batch, 1] booleans saying which sequences are still running at time t;
  // empty when every sequence runs the whole length.
  std::vector<Value> stepMasks() {
    if (!has(kSequenceLens)) return {};
    const TensorType& lensType = types_[kSequenceLens];
    if (auto* known = input(kSequenceLens).index() == 0 ? graph::asConstant(input(kSequenceLens).node()) : nullptr) {
      Ints lengths = arrayToInts(known->data);
      if (std::all_of(lengths.begin(), lengths.end(), [&](int64_t n) { return n >= steps_; })) return {};
      std::vector<Value> masks;
      for (int64_t t = 0; t < steps_; ++t) {
        auto array = runtime::NDArray::empty({batch_, 1}, runtime::DataType::boolean());
        auto* out = static_cast<uint8_t*>(array.data());
        for (int64_t n = 0; n < batch_; ++n) out[n] = t < lengths[size_t(n)] ? 1 : 0;
        masks.push_back(graph::makeConstant(uniqueName("t" + std::to_string(t) + "/running"), array));
      }
      return masks;
    }
    // Lengths known only at run time: Less(step index, length) for all steps at once.
    auto steps = runtime::NDArray::empty({steps_, 1}, toRuntimeType(lensType.dtype));
    for (int64_t t = 0; t < steps_; ++t) {
      switch (lensType.dtype.bits()) {
        case 8: static_cast<int8_t*>(steps.data())[t] = int8_t(t); break;
        case 16: static_cast<int16_t*>(steps.data())[t] = int16_t(t); break;
        case 32: static_cast<int32_t*>(steps.data())[t] = int32_t(t); break;
        default: static_cast<int64_t*>(steps.data())[t] = t; break;
      }
    }
    Value lengths = reshape("lengths", input(kSequenceLens), {1, batch_});
    Value running = operation("running", "Less", {graph::makeConstant(uniqueName("step_index"), steps), lengths});
    Value column = reshape("running.column", running, {steps_ * batch_, 1});
    if (steps_ == 1) return {column};
    return operations("running.steps", "Split", {column}, {{"axis", int64_t(0)}}, size_t(steps_));
  }

  // f(clip(x)) for one of the node's activation functions.
  Value activate(const Activation& f, Value x, const std::string& suffix) {
    if (clip_) x = operation(suffix + ".clip", "Clip", {x}, {{"min", -*clip_}, {"max", *clip_}});
    const std::string& name = f.name;
    if (name == "Affine")
      return operation(suffix, "Add", {operation(suffix + ".scale", "Mul", {x, scalar(f.alpha)}), scalar(f.beta)});
    if (name == "ScaledTanh") {
      Value inner = operation(suffix + ".tanh", "Tanh", {operation(suffix + ".scale", "Mul", {x, scalar(f.beta)})});
      return operation(suffix, "Mul", {inner, scalar(f.alpha)});
    }
    Attributes attributes;
    if (name == "HardSigmoid") attributes = {{"alpha", f.alpha}, {"beta", f.beta}};
    else if (name == "LeakyRelu" || name == "ThresholdedRelu" || name == "Elu") attributes = {{"alpha", f.alpha}};
    return operation(suffix, name, {x}, attributes);
  }

  // ---- the cells ----

  // Which sequences run at step t (undefined without sequence_lens): the state holds still and
  // Y is zero where they do not.
  Value masked(const Value& mask, const Value& next, const Value& previous, const std::string& suffix) {
    if (!mask.defined()) return next;
    return operation(suffix, "Where", {mask, next, previous.defined() ? previous : zeros()});
  }

  // [1, 4*hidden] constants turning a Sigmoid of all LSTM gates into Sigmoids of i, o, f and
  // the Tanh of c: activated = sigmoid(gates * scale) * scale + offset.
  Value gateScale() {
    if (!gateScale_.defined()) {
      std::vector<double> scale(size_t(4 * hidden_), 1.0);
      std::fill(scale.begin() + 3 * hidden_, scale.end(), 2.0);
      gateScale_ = constant("gates.scale", {1, 4 * hidden_}, scale);
    }
    return gateScale_;
  }
  Value gateOffset() {
    if (!gateOffset_.defined()) {
      std::vector<double> offset(size_t(4 * hidden_), 0.0);
      std::fill(offset.begin() + 3 * hidden_, offset.end(), -1.0);
      gateOffset_ = constant("gates.offset", {1, 4 * hidden_}, offset);
    }
    return gateOffset_;
  }

  Value gateSlice(const Value& value, int k, const std::string& suffix) {
    return slice(suffix, value, {k * hidden_}, {(k + 1) * hidden_}, {1});
  }

  struct Direction {
    int index = 0;
    std::string prefix;  ///< "" or "forward/" / "reverse/" for bidirectional nodes.
    const Activation* f = nullptr;  ///< The direction's activation functions.
    std::vector<std::vector<Value>> projections;  ///< Per block, per time step.
    std::vector<Value> recurrentWeights;          ///< Per block.
    Value recurrentBias;                          ///< GRU with linear_before_reset: Rbh.
    Value peepholes[3];                           ///< LSTM: input, output, forget.
  };

  State lstmStep(Direction& dir, const State& state, const Value& x, const Value& mask, const std::string& at) {
    const Activation &f = dir.f[0], &g = dir.f[1], &h = dir.f[2];
    Value gates = x;
    if (state.h.defined())
      gates = operation(at + "gates", "Add",
                        {operation(at + "recurrent", "MatMul", {state.h, dir.recurrentWeights[0]}), x});
    if (f.name == "Sigmoid" && g.name == "Tanh" && !has(kPeepholes)) {
      // The default functions on all four gates at once, tanh(x) = 2 sigmoid(2x) - 1: the
      // Sigmoid joins the MatMul's epilogue, and the kernels after it hold one tanh (h's)
      // instead of five transcendental functions, which LLVM takes most of compile time for.
      if (clip_) gates = operation(at + "gates.clip", "Clip", {gates}, {{"min", -*clip_}, {"max", *clip_}});
      Value scaled = operation(at + "gates.scaled", "Mul", {gates, gateScale()});
      Value sigmoid = operation(at + "gates.sigmoid", "Sigmoid", {scaled});
      Value activated = operation(at + "gates.activated", "Add",
                                  {operation(at + "gates.rescaled", "Mul", {sigmoid, gateScale()}), gateOffset()});
      Value inputGate = gateSlice(activated, 0, at + "i");
      Value written = operation(at + "ic", "Mul", {inputGate, gateSlice(activated, 3, at + "c")});
      Value c = written;
      if (state.c.defined()) {
        Value forget = inputForget_ ? operation(at + "f", "Sub", {scalar(1.0), inputGate}) : gateSlice(activated, 2, at + "f");
        c = operation(at + "C", "Add", {operation(at + "fC", "Mul", {forget, state.c}), written});
      }
      c = masked(mask, c, state.c, at + "C.kept");
      Value hidden = operation(at + "H", "Mul", {gateSlice(activated, 1, at + "o"), activate(h, c, at + "h")});
      return {masked(mask, hidden, state.h, at + "H.kept"), c};
    }
    Value inputIn = gateSlice(gates, 0, at + "i.in"), forgetIn = gateSlice(gates, 2, at + "f.in");
    if (has(kPeepholes) && state.c.defined()) {
      inputIn = operation(at + "i.peephole", "Add", {inputIn, operation(at + "i.Pc", "Mul", {state.c, dir.peepholes[0]})});
      forgetIn = operation(at + "f.peephole", "Add", {forgetIn, operation(at + "f.Pc", "Mul", {state.c, dir.peepholes[2]})});
    }
    Value inputGate = activate(f, inputIn, at + "i");
    Value cell = activate(g, gateSlice(gates, 3, at + "c.in"), at + "c");
    Value written = operation(at + "ic", "Mul", {inputGate, cell});
    Value c = written;
    if (state.c.defined()) {
      Value forget = inputForget_ ? operation(at + "f", "Sub", {scalar(1.0), inputGate}) : activate(f, forgetIn, at + "f");
      c = operation(at + "C", "Add", {operation(at + "fC", "Mul", {forget, state.c}), written});
    }
    c = masked(mask, c, state.c, at + "C.kept");
    Value outputIn = gateSlice(gates, 1, at + "o.in");
    if (has(kPeepholes))
      outputIn = operation(at + "o.peephole", "Add", {outputIn, operation(at + "o.Pc", "Mul", {c, dir.peepholes[1]})});
    Value hidden = operation(at + "H", "Mul", {activate(f, outputIn, at + "o"), activate(h, c, at + "h")});
    return {masked(mask, hidden, state.h, at + "H.kept"), c};
  }

  State gruStep(Direction& dir, const State& state, const Value& x, const Value& mask, const std::string& at) {
    const Activation &f = dir.f[0], &g = dir.f[1];
    Value hiddenIn, update;
    if (linearBeforeReset_) {
      // One MatMul by R for all three gates; the reset gate scales R's part of the candidate.
      Value recurrent = state.h.defined() ? operation(at + "recurrent", "MatMul", {state.h, dir.recurrentWeights[0]})
                                          : Value();
      auto sum = [&](int k, const std::string& name) {
        Value fromX = gateSlice(x, k, at + name + ".x");
        if (!recurrent.defined()) return fromX;
        return operation(at + name + ".in", "Add", {fromX, gateSlice(recurrent, k, at + name + ".h")});
      };
      update = activate(f, sum(0, "z"), at + "z");
      Value reset = activate(f, sum(1, "r"), at + "r");
      Value fromH = recurrent.defined() ? gateSlice(recurrent, 2, at + "hh") : Value();
      if (dir.recurrentBias.defined())
        fromH = fromH.defined() ? operation(at + "hh.bias", "Add", {fromH, dir.recurrentBias}) : dir.recurrentBias;
      hiddenIn = gateSlice(x, 2, at + "h.x");
      if (fromH.defined())
        hiddenIn = operation(at + "h.in", "Add", {hiddenIn, operation(at + "rh", "Mul", {reset, fromH})});
    } else {
      // The reset gate scales the state before its MatMul: two MatMuls by R per step.
      Value gates = x;
      const Value& xHidden = dir.projections[1][size_t(stepTime_)];
      if (state.h.defined())
        gates = operation(at + "gates", "Add",
                          {operation(at + "recurrent", "MatMul", {state.h, dir.recurrentWeights[0]}), x});
      update = activate(f, gateSlice(gates, 0, at + "z.in"), at + "z");
      hiddenIn = xHidden;
      if (state.h.defined()) {
        Value reset = activate(f, gateSlice(gates, 1, at + "r.in"), at + "r");
        Value scaled = operation(at + "rH", "Mul", {reset, state.h});
        hiddenIn = operation(at + "h.in", "Add",
                             {operation(at + "h.recurrent", "MatMul", {scaled, dir.recurrentWeights[1]}), xHidden});
      }
    }
    Value candidate = activate(g, hiddenIn, at + "h");
    Value kept = operation(at + "1-z", "Sub", {scalar(1.0), update});
    Value hidden = operation(at + "H.new", "Mul", {kept, candidate});
    if (state.h.defined())
      hidden = operation(at + "H", "Add", {hidden, operation(at + "zH", "Mul", {update, state.h})});
    return {masked(mask, hidden, state.h, at + "H.kept"), {}};
  }

  State rnnStep(Direction& dir, const State& state, const Value& x, const Value& mask, const std::string& at) {
    Value in = x;
    if (state.h.defined())
      in = operation(at + "in", "Add", {operation(at + "recurrent", "MatMul", {state.h, dir.recurrentWeights[0]}), x});
    return {masked(mask, activate(dir.f[0], in, at + "H"), state.h, at + "H.kept"), {}};
  }

  struct DirectionResult {
    std::vector<Value> outputs;  ///< Y's rows per time step, [batch, hidden].
    State last;
  };

  DirectionResult runDirection(int d, const Value& rows, const std::vector<Value>& masks) {
    Direction dir;
    dir.index = d;
    dir.prefix = directions_ == 2 ? (d == 0 ? "forward/" : "reverse/") : "";
    dir.f = &activations_[size_t(d * shape_.activations)];
    const int gates = shape_.gates;
    if (cell_ == Cell::GRU && !linearBeforeReset_) {
      dir.projections.push_back(project(rows, d, 0, 2, 2, dir.prefix));
      dir.projections.push_back(project(rows, d, 2, 3, 3, dir.prefix));
      dir.recurrentWeights.push_back(transposedWeights(kR, d, 0, 2, dir.prefix + "R.0"));
      dir.recurrentWeights.push_back(transposedWeights(kR, d, 2, 3, dir.prefix + "R.2"));
    } else if (cell_ == Cell::GRU) {
      // R's hidden-gate bias sits inside the reset gate's product; the others join W's.
      dir.projections.push_back(project(rows, d, 0, gates, 2, dir.prefix));
      dir.recurrentWeights.push_back(transposedWeights(kR, d, 0, gates, dir.prefix + "R"));
      dir.recurrentBias = bias(d, 2, 3, false, 3, dir.prefix + "R.bias.h");
    } else {
      dir.projections.push_back(project(rows, d, 0, gates, gates, dir.prefix));
      dir.recurrentWeights.push_back(transposedWeights(kR, d, 0, gates, dir.prefix + "R"));
    }
    if (has(kPeepholes))
      for (int k = 0; k < 3; ++k) dir.peepholes[k] = peephole(d, k, dir.prefix + "P." + "iof"[k]);
    State state{initialState(kInitialH, d, dir.prefix + "initial_h"), initialState(kInitialC, d, dir.prefix + "initial_c")};
    DirectionResult result;
    result.outputs.resize(size_t(steps_));
    const bool reverse = reverseOnly_ || d == 1;
    for (int64_t s = 0; s < steps_; ++s) {
      stepTime_ = reverse ? steps_ - 1 - s : s;
      std::string at = dir.prefix + "t" + std::to_string(stepTime_) + "/";
      const Value& x = dir.projections[0][size_t(stepTime_)];
      Value mask = masks.empty() ? Value() : masks[size_t(stepTime_)];
      switch (cell_) {
        case Cell::LSTM: state = lstmStep(dir, state, x, mask, at); break;
        case Cell::GRU: state = gruStep(dir, state, x, mask, at); break;
        case Cell::RNN: state = rnnStep(dir, state, x, mask, at); break;
      }
      result.outputs[size_t(stepTime_)] =
          mask.defined() ? operation(at + "Y", "Where", {mask, state.h, scalar(0.0)}) : state.h;
    }
    result.last = state;
    return result;
  }

  // ---- the whole node ----

  // Final states of every direction as [num_directions, batch, hidden] (layout 1: [batch, num_directions, hidden]).
  Value finalStates(const std::vector<Value>& perDirection, const std::string& name) {
    std::vector<Value> parts;
    for (size_t d = 0; d < perDirection.size(); ++d)
      parts.push_back(reshape(name + (directions_ == 2 ? "." + std::to_string(d) : ""), perDirection[d],
                              batchMajor_ ? Ints{batch_, 1, hidden_} : Ints{1, batch_, hidden_}));
    if (parts.size() == 1) return parts[0];
    return operation(name, "Concat", parts, {{"axis", int64_t(batchMajor_ ? 1 : 0)}});
  }

  Expected<std::vector<Value>> build() {
    Value x = input(kX);
    if (batchMajor_) x = operation("X.time_major", "Transpose", {x}, {{"perm", Ints{1, 0, 2}}});
    Value rows = reshape("X.rows", x, {steps_ * batch_, inputSize_});
    std::vector<Value> masks = stepMasks();
    std::vector<DirectionResult> results;
    for (int d = 0; d < directions_; ++d) results.push_back(runDirection(d, rows, masks));

    std::vector<Value> outputs(node_.outputsUsed.size());
    if (node_.outputsUsed[0]) {
      std::vector<Value> perDirection;
      for (size_t d = 0; d < results.size(); ++d) {
        std::string name = "Y" + (directions_ == 2 ? "." + std::to_string(d) : "");
        const auto& rowsOfY = results[d].outputs;
        Value all = rowsOfY.size() == 1 ? rowsOfY[0]
                                        : operation(name + ".rows", "Concat", rowsOfY, {{"axis", int64_t(0)}});
        perDirection.push_back(reshape(name, all, {steps_, 1, batch_, hidden_}));
      }
      Value y = perDirection.size() == 1 ? perDirection[0]
                                         : operation("Y", "Concat", perDirection, {{"axis", int64_t(1)}});
      if (batchMajor_) y = operation("Y.batch_major", "Transpose", {y}, {{"perm", Ints{2, 0, 1, 3}}});
      outputs[0] = y;
    }
    if (node_.outputsUsed.size() > 1 && node_.outputsUsed[1]) {
      std::vector<Value> last;
      for (auto& result : results) last.push_back(result.last.h);
      outputs[1] = finalStates(last, "Y_h");
    }
    if (node_.outputsUsed.size() > 2 && node_.outputsUsed[2]) {
      std::vector<Value> last;
      for (auto& result : results) last.push_back(result.last.c);
      outputs[2] = finalStates(last, "Y_c");
    }
    return outputs;
  }

  const RecurrentNode& node_;
  std::vector<graph::Provenance> provenance_;
  Cell cell_ = Cell::RNN;
  CellShape shape_;
  int directions_ = 1;
  bool reverseOnly_ = false, batchMajor_ = false, inputForget_ = false, linearBeforeReset_ = false;
  std::optional<double> clip_;
  std::optional<int64_t> declaredHidden_;
  std::vector<Activation> activations_;  ///< Per direction, shape_.activations each.
  std::vector<TensorType> types_;
  DataType dtype_;
  int64_t steps_ = 0, batch_ = 0, inputSize_ = 0, hidden_ = 0;
  int64_t stepTime_ = 0;  ///< The time step being built.
  std::set<std::string> names_;
  std::map<double, Value> scalars_;
  Value zeros_, gateScale_, gateOffset_;
};

}  // namespace

bool isRecurrentOperator(const std::string& opType) { return opType == "LSTM" || opType == "GRU" || opType == "RNN"; }

Expected<std::vector<Value>> expandRecurrentNode(const RecurrentNode& node, const std::vector<Value>& graphInputs) {
  return RecurrentExpander(node).run(graphInputs);
}

}  // namespace tessel::frontend
