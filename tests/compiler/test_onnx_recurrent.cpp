// ONNX LSTM, GRU and RNN: small models built here, compiled and run, against a plain C++ reference; malformed nodes.
#include <QtTest>

#include "tests/compiler/OnnxProto.h"

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "compiler/driver/Driver.h"
#include "compiler/frontend/onnx/OnnxImporter.h"

using namespace tessel;
using namespace tessel::frontend;

namespace {

using Floats = std::vector<float>;

Floats randomFloats(size_t count, unsigned seed, float scale = 0.5f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  Floats values(count);
  for (float& value : values) value = uniform(generator);
  return values;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// One recurrent node and its data: what the model holds and what the reference reads.
struct Recurrent {
  std::string op = {};  // LSTM, GRU, RNN
  int64_t steps = 3, batch = 2, inputSize = 3, hidden = 4;
  int directions = 1;
  bool reverse = false;      // with directions == 1
  bool batchMajor = false;   // layout 1
  int64_t linearBeforeReset = 0;
  std::string activation = {};  // RNN's, when not the default Tanh
  Floats x = {}, w = {}, r = {}, b = {}, p = {}, initialH = {}, initialC = {};
  std::vector<int32_t> lengths = {};  // empty: full length
  // Inputs given as graph inputs (values set at run time) instead of initializers.
  std::set<std::string> runtimeInputs = {};

  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
};

// ---- the reference: the ONNX equations, one time step and one batch entry at a time ----

struct Reference {
  std::vector<float> y, yH, yC;  // [T, D, N, H], [D, N, H], [D, N, H] (layout 0)
};

Reference reference(const Recurrent& m) {
  const int64_t T = m.steps, N = m.batch, I = m.inputSize, H = m.hidden, G = m.gates(), D = m.directions;
  Reference out;
  out.y.assign(size_t(T * D * N * H), 0.0f);
  out.yH.assign(size_t(D * N * H), 0.0f);
  out.yC.assign(size_t(D * N * H), 0.0f);
  auto x = [&](int64_t t, int64_t n, int64_t i) {
    return m.batchMajor ? m.x[size_t((n * T + t) * I + i)] : m.x[size_t((t * N + n) * I + i)];
  };
  auto state = [&](const Floats& s, int64_t d, int64_t n, int64_t j) {
    if (s.empty()) return 0.0f;
    return m.batchMajor ? s[size_t((n * D + d) * H + j)] : s[size_t((d * N + n) * H + j)];
  };
  auto f = [&](float v) {
    if (m.activation == "Relu") return std::max(v, 0.0f);
    return m.op == "RNN" ? std::tanh(v) : sigmoid(v);
  };
  for (int64_t d = 0; d < D; ++d)
    for (int64_t n = 0; n < N; ++n) {
      Floats h = Floats(size_t(H)), c = Floats(size_t(H));
      for (int64_t j = 0; j < H; ++j) h[size_t(j)] = state(m.initialH, d, n, j), c[size_t(j)] = state(m.initialC, d, n, j);
      int64_t length = m.lengths.empty() ? T : m.lengths[size_t(n)];
      bool backwards = m.reverse || d == 1;
      for (int64_t s = 0; s < length; ++s) {
        int64_t t = backwards ? length - 1 - s : s;
        // Xt*W^T + Wb and Ht-1*R^T + Rb, per gate row.
        Floats xw = Floats(size_t(G * H)), hr = Floats(size_t(G * H));
        for (int64_t row = 0; row < G * H; ++row) {
          float a = m.b.empty() ? 0.0f : m.b[size_t(d * 2 * G * H + row)];
          float bR = m.b.empty() ? 0.0f : m.b[size_t(d * 2 * G * H + G * H + row)];
          for (int64_t i = 0; i < I; ++i) a += x(t, n, i) * m.w[size_t((d * G * H + row) * I + i)];
          for (int64_t k = 0; k < H; ++k) bR += h[size_t(k)] * m.r[size_t((d * G * H + row) * H + k)];
          xw[size_t(row)] = a, hr[size_t(row)] = bR;
        }
        Floats next = Floats(size_t(H));
        if (m.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) next[size_t(j)] = f(xw[size_t(j)] + hr[size_t(j)]);
        } else if (m.op == "GRU") {
          Floats reset = Floats(size_t(H));
          for (int64_t j = 0; j < H; ++j) reset[size_t(j)] = sigmoid(xw[size_t(H + j)] + hr[size_t(H + j)]);
          for (int64_t j = 0; j < H; ++j) {
            float z = sigmoid(xw[size_t(j)] + hr[size_t(j)]);
            float recurrent;
            if (m.linearBeforeReset) {
              recurrent = reset[size_t(j)] * hr[size_t(2 * H + j)];
            } else {  // (r . Ht-1) * Rh^T + Rbh
              recurrent = m.b.empty() ? 0.0f : m.b[size_t(d * 2 * G * H + G * H + 2 * H + j)];
              for (int64_t k = 0; k < H; ++k)
                recurrent += reset[size_t(k)] * h[size_t(k)] * m.r[size_t((d * G * H + 2 * H + j) * H + k)];
            }
            float candidate = std::tanh(xw[size_t(2 * H + j)] + recurrent);
            next[size_t(j)] = (1 - z) * candidate + z * h[size_t(j)];
          }
        } else {
          auto peephole = [&](int k, int64_t j) { return m.p.empty() ? 0.0f : m.p[size_t(d * 3 * H + k * H + j)]; };
          for (int64_t j = 0; j < H; ++j) {
            float i = sigmoid(xw[size_t(j)] + hr[size_t(j)] + peephole(0, j) * c[size_t(j)]);
            float forget = sigmoid(xw[size_t(2 * H + j)] + hr[size_t(2 * H + j)] + peephole(2, j) * c[size_t(j)]);
            float cell = std::tanh(xw[size_t(3 * H + j)] + hr[size_t(3 * H + j)]);
            c[size_t(j)] = forget * c[size_t(j)] + i * cell;
            float o = sigmoid(xw[size_t(H + j)] + hr[size_t(H + j)] + peephole(1, j) * c[size_t(j)]);
            next[size_t(j)] = o * std::tanh(c[size_t(j)]);
          }
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) out.y[size_t(((t * D + d) * N + n) * H + j)] = h[size_t(j)];
      }
      for (int64_t j = 0; j < H; ++j) {
        out.yH[size_t((d * N + n) * H + j)] = h[size_t(j)];
        out.yC[size_t((d * N + n) * H + j)] = c[size_t(j)];
      }
    }
  return out;
}

// ---- the model ----

struct ModelBuilder {
  onnx::ModelProto model;
  std::map<std::string, runtime::NDArray> runtimeValues;

  explicit ModelBuilder(int opset) {
    model.set_ir_version(8);
    auto* opsetImport = model.add_opset_import();
    opsetImport->set_domain("");
    opsetImport->set_version(opset);
    model.mutable_graph()->set_name("recurrent");
  }
  onnx::GraphProto& graph() { return *model.mutable_graph(); }

  template <class T>
  void tensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<T>& values, bool runtime) {
    int elemType = std::is_same_v<T, float> ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT32;
    if (runtime) {
      auto* info = graph().add_input();
      info->set_name(name);
      auto* type = info->mutable_type()->mutable_tensor_type();
      type->set_elem_type(elemType);
      for (int64_t dim : dims) type->mutable_shape()->add_dim()->set_dim_value(dim);
      auto array = runtime::NDArray::empty(dims, *runtime::dataTypeOf<T>());
      array.copyFrom(values.data(), values.size() * sizeof(T));
      runtimeValues[name] = array;
      return;
    }
    auto* initializer = graph().add_initializer();
    initializer->set_name(name);
    initializer->set_data_type(elemType);
    for (int64_t dim : dims) initializer->add_dims(dim);
    initializer->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  }
  void output(const std::string& name) {
    auto* info = graph().add_output();
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
};

void addAttribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}
void addAttribute(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}
void addAttribute(onnx::NodeProto* node, const std::string& name, const std::vector<std::string>& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRINGS);
  for (auto& value : values) attribute->add_strings(value);
}

// The model of `m`: one node "rnn_node" with outputs Y, Y_h (and Y_c for LSTM).
ModelBuilder buildModel(const Recurrent& m, int opset = 14) {
  ModelBuilder builder(opset);
  const int64_t D = m.directions, G = m.gates(), H = m.hidden;
  auto runtime = [&](const std::string& name) { return m.runtimeInputs.count(name) != 0; };
  builder.tensor("X", m.batchMajor ? std::vector<int64_t>{m.batch, m.steps, m.inputSize}
                                   : std::vector<int64_t>{m.steps, m.batch, m.inputSize},
                 m.x, true);
  builder.tensor("W", {D, G * H, m.inputSize}, m.w, runtime("W"));
  builder.tensor("R", {D, G * H, H}, m.r, runtime("R"));
  std::vector<std::string> inputs{"X", "W", "R", "", "", "", "", ""};
  std::vector<int64_t> stateDims = m.batchMajor ? std::vector<int64_t>{m.batch, D, H} : std::vector<int64_t>{D, m.batch, H};
  if (!m.b.empty()) builder.tensor(inputs[3] = "B", {D, 2 * G * H}, m.b, runtime("B"));
  if (!m.lengths.empty()) builder.tensor(inputs[4] = "sequence_lens", {m.batch}, m.lengths, runtime("sequence_lens"));
  if (!m.initialH.empty()) builder.tensor(inputs[5] = "initial_h", stateDims, m.initialH, runtime("initial_h"));
  if (!m.initialC.empty()) builder.tensor(inputs[6] = "initial_c", stateDims, m.initialC, runtime("initial_c"));
  if (!m.p.empty()) builder.tensor(inputs[7] = "P", {D, 3 * H}, m.p, runtime("P"));
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  auto* node = builder.graph().add_node();
  node->set_op_type(m.op);
  node->set_name("rnn_node");
  for (auto& input : inputs) node->add_input(input);
  std::vector<std::string> outputs{"Y", "Y_h"};
  if (m.op == "LSTM") outputs.push_back("Y_c");
  for (auto& output : outputs) {
    node->add_output(output);
    builder.output(output);
  }
  addAttribute(node, "hidden_size", H);
  if (D == 2) addAttribute(node, "direction", std::string("bidirectional"));
  if (m.reverse) addAttribute(node, "direction", std::string("reverse"));
  if (m.batchMajor) addAttribute(node, "layout", int64_t(1));
  if (m.op == "GRU") addAttribute(node, "linear_before_reset", m.linearBeforeReset);
  if (!m.activation.empty()) addAttribute(node, "activations", std::vector<std::string>(size_t(D), m.activation));
  return builder;
}

// Layout-0 reference data [A, B, N, H]-style arrays reordered to layout 1 where needed.
std::vector<float> toBatchMajorY(const Recurrent& m, const std::vector<float>& y) {
  const int64_t T = m.steps, D = m.directions, N = m.batch, H = m.hidden;
  std::vector<float> out(y.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < H; ++j) out[size_t(((n * T + t) * D + d) * H + j)] = y[size_t(((t * D + d) * N + n) * H + j)];
  return out;
}
std::vector<float> toBatchMajorState(const Recurrent& m, const std::vector<float>& s) {
  const int64_t D = m.directions, N = m.batch, H = m.hidden;
  std::vector<float> out(s.size());
  for (int64_t d = 0; d < D; ++d)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) out[size_t((n * D + d) * H + j)] = s[size_t((d * N + n) * H + j)];
  return out;
}

// Imports, compiles and runs `m`'s model; compares every output with the reference.
void checkAgainstReference(const Recurrent& m) {
  ModelBuilder builder = buildModel(m);
  auto imported = importOnnxBytes(builder.model.SerializeAsString(), "recurrent.onnx");
  QVERIFY2(imported.ok(), imported ? "" : imported.error().toString().c_str());
  for (const graph::OperationNode* op : imported->operations()) {
    QVERIFY2(op->name.rfind("rnn_node/", 0) == 0, op->name.c_str());
    QCOMPARE(op->provenance.at(0).nodeName, std::string("rnn_node"));
    QCOMPARE(op->provenance.at(0).opType, m.op);
  }
  auto compiled = driver::compileGraph(*imported);
  QVERIFY2(compiled.ok(), compiled ? "" : compiled.error().toString().c_str());
  auto executor = driver::createExecutor(*compiled);
  QVERIFY2(executor.ok(), executor ? "" : executor.error().toString().c_str());
  auto x = runtime::NDArray::empty(m.batchMajor ? std::vector<int64_t>{m.batch, m.steps, m.inputSize}
                                                : std::vector<int64_t>{m.steps, m.batch, m.inputSize},
                                   runtime::DataType::float32());
  x.copyFrom(m.x);
  (*executor)->setInput("X", x);
  for (auto& [name, value] : builder.runtimeValues)
    if (name != "X") (*executor)->setInput(name, value);
  (*executor)->run();
  Reference expected = reference(m);
  std::map<std::string, std::vector<float>> wanted{
      {"Y", m.batchMajor ? toBatchMajorY(m, expected.y) : expected.y},
      {"Y_h", m.batchMajor ? toBatchMajorState(m, expected.yH) : expected.yH}};
  if (m.op == "LSTM") wanted["Y_c"] = m.batchMajor ? toBatchMajorState(m, expected.yC) : expected.yC;
  for (auto& [name, values] : wanted) {
    runtime::NDArray got = (*executor)->getOutput(name);
    QCOMPARE(size_t(got.numElements()), values.size());
    auto data = got.values<float>();
    for (size_t i = 0; i < values.size(); ++i)
      QVERIFY2(std::fabs(data[i] - values[i]) < 1e-4f,
               qPrintable(QString("%1[%2]: got %3, expected %4").arg(name.c_str()).arg(i).arg(data[i]).arg(values[i])));
  }
}

Recurrent withData(Recurrent m, unsigned seed) {
  const int64_t D = m.directions, G = m.gates(), H = m.hidden;
  m.x = randomFloats(size_t(m.steps * m.batch * m.inputSize), seed, 1.0f);
  m.w = randomFloats(size_t(D * G * H * m.inputSize), seed + 1);
  m.r = randomFloats(size_t(D * G * H * H), seed + 2);
  m.b = randomFloats(size_t(D * 2 * G * H), seed + 3);
  return m;
}

std::string importMessage(const ModelBuilder& builder) {
  auto imported = importOnnxBytes(builder.model.SerializeAsString(), "bad.onnx");
  return imported ? std::string("(imported without error)") : imported.error().toString();
}

}  // namespace

class TestOnnxRecurrent : public QObject {
  Q_OBJECT
private slots:
  // Both directions, per-sequence lengths known only at run time (shorter sequences' outputs
  // are zero and their final states those of their last step), initial states, peepholes.
  void bidirectionalLstmWithLengthsInitialStatesAndPeepholes() {
    Recurrent m = withData({.op = "LSTM", .steps = 4, .batch = 3, .directions = 2}, 10);
    m.lengths = {4, 2, 3};
    m.runtimeInputs = {"sequence_lens", "initial_h", "initial_c"};
    m.initialH = randomFloats(size_t(2 * m.batch * m.hidden), 20);
    m.initialC = randomFloats(size_t(2 * m.batch * m.hidden), 21);
    m.p = randomFloats(size_t(2 * 3 * m.hidden), 22);
    checkAgainstReference(m);
  }

  // Lengths and states as constants, and the batch-major layout (opset 14).
  void batchMajorLstmWithConstantLengths() {
    Recurrent m = withData({.op = "LSTM", .steps = 3, .batch = 2, .directions = 2, .batchMajor = true}, 30);
    m.lengths = {1, 3};
    m.initialH = randomFloats(size_t(2 * m.batch * m.hidden), 31);
    checkAgainstReference(m);
  }

  void reverseGruResetAfterTheRecurrentProductWithLengths() {
    Recurrent m = withData({.op = "GRU", .steps = 3, .batch = 2, .reverse = true, .linearBeforeReset = 1}, 40);
    m.initialH = randomFloats(size_t(m.batch * m.hidden), 41);
    m.lengths = {3, 1};
    m.runtimeInputs = {"sequence_lens"};
    checkAgainstReference(m);
  }

  // Weights given at run time: the expansion slices and transposes them with operations.
  void gruResetBeforeTheRecurrentProductWithRuntimeWeights() {
    Recurrent m = withData({.op = "GRU", .steps = 3, .batch = 2, .directions = 2, .linearBeforeReset = 0}, 50);
    m.runtimeInputs = {"W", "R", "B"};
    checkAgainstReference(m);
  }

  void rnnWithReluAndConstantLengths() {
    Recurrent m = withData({.op = "RNN", .steps = 4, .batch = 2, .activation = "Relu"}, 60);
    m.initialH = randomFloats(size_t(m.batch * m.hidden), 61);
    m.lengths = {2, 4};
    checkAgainstReference(m);
  }

  void wrongWeightShapeNamesTheNodeAndTheShape() {
    Recurrent m = withData({.op = "LSTM"}, 70);
    m.w.resize(m.w.size() / 2);
    ModelBuilder builder = buildModel(m);
    // W as [1, 8, 3] where hidden_size 4 needs [1, 16, 3].
    auto* w = builder.graph().mutable_initializer(0);
    w->set_dims(1, 8);
    std::string message = importMessage(builder);
    QVERIFY2(message.find("'rnn_node' (LSTM)") != std::string::npos, message.c_str());
    QVERIFY2(message.find("W of shape [1, 8, 3]") != std::string::npos, message.c_str());
    QVERIFY2(message.find("[1, 16, 3]") != std::string::npos, message.c_str());
  }

  void unknownActivationListsTheValidOnes() {
    Recurrent m = withData({.op = "RNN", .activation = "Swish"}, 80);
    std::string message = importMessage(buildModel(m));
    QVERIFY2(message.find("'rnn_node' (RNN)") != std::string::npos, message.c_str());
    QVERIFY2(message.find("activation 'Swish'") != std::string::npos, message.c_str());
    QVERIFY2(message.find("HardSigmoid") != std::string::npos, message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestOnnxRecurrent)
#include "test_onnx_recurrent.moc"
