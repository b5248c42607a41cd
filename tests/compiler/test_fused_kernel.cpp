// Fused operations compiled as one kernel: the same numbers as running their primitive
// kernels one by one, and the epilogue of a convolution computed without an intermediate buffer.
#include <QtTest>

#include <cmath>
#include <map>

#include "compiler/driver/FusedComposition.h"
#include "compiler/driver/FusedKernel.h"
#include "compiler/graph/AlterLayout.h"
#include "compiler/graph/FuseOps.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/Gemm.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/Reduction.h"
#include "compiler/ops/Softmax.h"
#include "compiler/ops/Transform.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "core/ir/IRVisitor.h"
#include "core/te/Rewire.h"

using namespace tessel;
using graph::OpCall;
using graph::OpDef;
using graph::OpKernel;
using graph::OpPattern;
using graph::TensorType;
using graph::Value;

namespace {
using Shape = std::vector<int64_t>;

// The operators these tests fuse, defined on the operator library the way the registry
// defines them, so the composition is tested on its own (the global registry fills up as
// the operator definitions land).
OpDef makeOp(std::string name, OpPattern pattern, std::function<Expected<OpKernel>(const OpCall&)> build) {
  OpDef def;
  def.name = std::move(name);
  def.pattern = pattern;
  def.minInputs = 1;
  def.maxInputs = -1;
  def.build = std::move(build);
  return def;
}

OpKernel kernelOf(Workload workload, std::vector<int> inputIndices,
                  std::function<Expected<Schedule>(const Workload&, const Target&)> schedule) {
  return OpKernel{std::move(workload), std::move(inputIndices), std::move(schedule)};
}

Expected<OpKernel> binaryKernel(const OpCall& call, BinaryOp op) {
  auto w = binaryElementwise(op, call.inputTypes[0].shape, call.inputTypes[1].shape, call.inputTypes[0].dtype);
  if (!w) return w.error();
  return kernelOf(*w, {0, 1}, [](const Workload& w, const Target& t) { return defaultElementwiseSchedule(w, t); });
}

const graph::OpRegistry& testRegistry() {
  static graph::OpRegistry registry = [] {
    graph::OpRegistry r;
    r.add(makeOp("Conv", OpPattern::OutElemwiseFusable, [](const OpCall& call) -> Expected<OpKernel> {
      const Shape& x = call.inputTypes[0].shape;
      const Shape& w = call.inputTypes[1].shape;
      Conv2dParams p;
      p.batch = x[0], p.channels = x[1], p.height = x[2], p.width = x[3];
      p.filters = w[0], p.kernelH = w[2], p.kernelW = w[3];
      p.pad = (*call.intsAttr("pads", {0, 0, 0, 0}))[0];
      p.bias = call.hasInput(2);
      auto workload = checkedConv2d(p, call.inputTypes[0].dtype, call.target);
      if (!workload) return workload.error();
      std::vector<int> inputs = {0, 1};
      if (p.bias) inputs.push_back(2);
      return kernelOf(*workload, inputs,
                      [p](const Workload& w, const Target& t) { return defaultConv2dSchedule(w, p, t); });
    }));
    r.add(makeOp("MatMul", OpPattern::OutElemwiseFusable, [](const OpCall& call) -> Expected<OpKernel> {
      const Shape& a = call.inputTypes[0].shape;
      const Shape& b = call.inputTypes[1].shape;
      return kernelOf(matmul(a[0], b[1], a[1], call.inputTypes[0].dtype, call.target), {0, 1},
                      [](const Workload& w, const Target& t) { return defaultMatmulSchedule(w, t); });
    }));
    r.add(makeOp("Gemm", OpPattern::OutElemwiseFusable, [](const OpCall& call) -> Expected<OpKernel> {
      GemmParams p;
      p.transB = *call.intAttr("transB", 0) != 0;
      p.m = call.inputTypes[0].shape[0];
      p.k = call.inputTypes[0].shape[1];
      p.n = call.inputTypes[1].shape[p.transB ? 0 : 1];
      if (call.hasInput(2)) p.biasShape = call.inputTypes[2].shape;
      auto w = gemm(p, call.inputTypes[0].dtype, call.target);
      if (!w) return w.error();
      std::vector<int> inputs = {0, 1};
      if (call.hasInput(2)) inputs.push_back(2);
      return kernelOf(*w, inputs, [](const Workload& w, const Target& t) { return defaultGemmSchedule(w, t); });
    }));
    r.add(makeOp("Add", OpPattern::Broadcast, [](const OpCall& call) { return binaryKernel(call, BinaryOp::Add); }));
    r.add(makeOp("Sub", OpPattern::Broadcast, [](const OpCall& call) { return binaryKernel(call, BinaryOp::Sub); }));
    r.add(makeOp("Mul", OpPattern::Broadcast, [](const OpCall& call) { return binaryKernel(call, BinaryOp::Mul); }));
    r.add(makeOp("Relu", OpPattern::ElementWise, [](const OpCall& call) -> Expected<OpKernel> {
      return kernelOf(unaryElementwise(UnaryOp::Relu, call.inputTypes[0].shape, call.inputTypes[0].dtype), {0},
                      [](const Workload& w, const Target& t) { return defaultElementwiseSchedule(w, t); });
    }));
    // A relu whose schedule stages its input through a cache read: a schedule that only
    // fits the operator alone (in a fused kernel its input is another stage).
    r.add(makeOp("CachedRelu", OpPattern::ElementWise, [](const OpCall& call) -> Expected<OpKernel> {
      return kernelOf(unaryElementwise(UnaryOp::Relu, call.inputTypes[0].shape, call.inputTypes[0].dtype), {0},
                      [](const Workload& w, const Target&) -> Expected<Schedule> {
                        Schedule s(w.outputs);
                        if (Status st = s.cacheRead("in", "global", {"out"}, "in.cached"); !st) return st.error();
                        return s;
                      });
    }));
    // A relu that reads its input flattened, through a placeholder of another shape with as
    // many elements (the driver binds buffers by element count).
    r.add(makeOp("FlatRelu", OpPattern::ElementWise, [](const OpCall& call) -> Expected<OpKernel> {
      Shape flat = {elementCount(call.inputTypes[0].shape)};
      return kernelOf(unaryElementwise(UnaryOp::Relu, flat, call.inputTypes[0].dtype), {0},
                      [](const Workload& w, const Target& t) { return defaultElementwiseSchedule(w, t); });
    }));
    r.add(makeOp("Transpose", OpPattern::Injective, [](const OpCall& call) -> Expected<OpKernel> {
      auto perm = call.intsAttr("perm", {});
      if (!perm) return perm.error();
      auto w = transpose(call.inputTypes[0].shape, *perm, call.inputTypes[0].dtype);
      if (!w) return w.error();
      return kernelOf(*w, {0}, [](const Workload& w, const Target& t) { return defaultTransformSchedule(w, t); });
    }));
    r.add(makeOp("Concat", OpPattern::Injective, [](const OpCall& call) -> Expected<OpKernel> {
      std::vector<Shape> shapes;
      std::vector<int> inputs;
      for (size_t i = 0; i < call.inputTypes.size(); ++i) {
        shapes.push_back(call.inputTypes[i].shape);
        inputs.push_back(int(i));
      }
      auto w = concat(shapes, *call.intAttr("axis", 0), call.inputTypes[0].dtype);
      if (!w) return w.error();
      return kernelOf(*w, inputs, [](const Workload& w, const Target& t) { return defaultTransformSchedule(w, t); });
    }));
    OpDef reshapeDef = makeOp("Reshape", OpPattern::Injective, [](const OpCall& call) -> Expected<OpKernel> {
      auto target = call.constantInts(1, "shape");
      if (!target) return target.error();
      auto w = reshape(call.inputTypes[0].shape, *target, call.inputTypes[0].dtype);
      if (!w) return w.error();
      return kernelOf(*w, {0}, [](const Workload& w, const Target& t) { return defaultTransformSchedule(w, t); });
    });
    reshapeDef.valueInputs = {1};
    r.add(reshapeDef);
    r.add(makeOp("ReduceMean", OpPattern::CommReduce, [](const OpCall& call) -> Expected<OpKernel> {
      ReduceParams p;
      p.kind = ReduceKind::Mean;
      p.shape = call.inputTypes[0].shape;
      p.axes = *call.intsAttr("axes", {});
      p.keepDims = *call.intAttr("keepdims", 1) != 0;
      auto w = reduce(p, call.inputTypes[0].dtype);
      if (!w) return w.error();
      return kernelOf(*w, {0}, [p](const Workload& w, const Target& t) { return defaultReduceSchedule(w, p, t); });
    }));
    r.add(makeOp("Softmax", OpPattern::CommReduce, [](const OpCall& call) -> Expected<OpKernel> {
      SoftmaxParams p;
      p.shape = call.inputTypes[0].shape;
      p.axis = *call.intAttr("axis", -1);
      auto w = softmax(p, call.inputTypes[0].dtype);
      if (!w) return w.error();
      return kernelOf(*w, {0}, [p](const Workload& w, const Target& t) { return defaultSoftmaxSchedule(w, p, t); });
    }));
    return r;
  }();
  return registry;
}

TensorType f32(Shape shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }

// Values in [-1, 1) from a fixed pattern, different per seed.
runtime::NDArray patternArray(const Shape& shape, int seed) {
  auto array = runtime::NDArray::empty(shape, toRuntimeType(DataType::float32()));
  std::vector<float> values(size_t(array.numElements()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(double((int64_t(i) * 7919 + seed * 104729) % 2001) / 1000.0 - 1.0);
  array.copyFrom(values);
  return array;
}

runtime::NDArray int64Array(const std::vector<int64_t>& values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, toRuntimeType(DataType::int64()));
  array.copyFrom(values);
  return array;
}

// Runs `kernel` under its own schedule on the node inputs it reads; empty on failure.
std::vector<runtime::NDArray> runKernel(const OpKernel& kernel, const std::vector<runtime::NDArray>& nodeInputs) {
  auto schedule = kernel.schedule ? kernel.schedule(kernel.workload, hostTarget())
                                  : Expected<Schedule>(Schedule(kernel.workload.outputs));
  if (!schedule) {
    qWarning("schedule: %s", schedule.error().toString().c_str());
    return {};
  }
  auto built = build(*schedule, kernel.workload.args(), kernel.workload.name);
  if (!built) {
    qWarning("build: %s", built.error().toString().c_str());
    return {};
  }
  std::vector<runtime::Value> args;
  for (size_t j = 0; j < kernel.inputIndices.size(); ++j) {
    // As the driver does, an array is passed to a placeholder with as many elements.
    const runtime::NDArray& array = nodeInputs.at(size_t(kernel.inputIndices[j]));
    Shape shape;
    for (const Expr& extent : kernel.workload.inputs[j].shape()) shape.push_back(*asConstInt(extent));
    args.push_back(shape == array.shape() ? array : array.view(shape, array.dtype()));
  }
  std::vector<runtime::NDArray> outputs;
  for (const te::Tensor& output : kernel.workload.outputs) {
    Shape shape;
    for (const Expr& extent : output.shape()) shape.push_back(*asConstInt(extent));
    outputs.push_back(runtime::NDArray::empty(shape, toRuntimeType(output.dtype())));
    args.push_back(outputs.back());
  }
  built->function.callPacked(args);
  return outputs;
}

// The fused node's result computed the unfused way: each body operation's own kernel, one
// after the other, with intermediates in memory.
runtime::NDArray runPrimitivesOneByOne(const graph::OperationNode& fused, const std::vector<runtime::NDArray>& inputs,
                                       const graph::OpRegistry& registry) {
  std::map<std::pair<const graph::GraphNode*, int>, runtime::NDArray> values;
  const graph::Graph& body = *fused.body;
  for (size_t k = 0; k < body.inputs.size(); ++k) values[{body.inputs[k].node(), 0}] = inputs[k];
  for (const graph::OperationNode* op : body.operations()) {
    OpCall call = graph::makeOpCall(*op);
    // Body inputs the outer graph knows by value are constants, as they are to an unfused node.
    for (size_t i = 0; i < op->inputs.size(); ++i)
      for (size_t k = 0; k < body.inputs.size(); ++k)
        if (op->inputs[i].node() == body.inputs[k].node())
          if (auto* constant = graph::asConstant(fused.inputs[k].node())) call.constantInputs[i] = constant->data;
    auto kernel = registry.find(op->op)->build(call);
    if (!kernel) qFatal("%s", kernel.error().toString().c_str());
    std::vector<runtime::NDArray> opInputs;
    for (const Value& input : op->inputs) {
      const graph::ConstantNode* constant = graph::asConstant(input.node());
      opInputs.push_back(constant ? constant->data : values.at({input.node(), input.index()}));
    }
    auto outputs = runKernel(*kernel, opInputs);
    if (outputs.empty()) qFatal("primitive %s did not run", op->op.c_str());
    for (size_t o = 0; o < outputs.size(); ++o) values[{op, int(o)}] = outputs[o];
  }
  return values.at({body.outputs[0].node(), body.outputs[0].index()});
}

// Empty when the two arrays hold the same numbers (up to float32 rounding), else the first difference.
QString differences(const runtime::NDArray& got, const runtime::NDArray& expected) {
  if (got.shape() != expected.shape()) return "shapes differ";
  auto a = got.toVector<float>(), b = expected.toVector<float>();
  for (size_t i = 0; i < a.size(); ++i)
    if (!(std::abs(a[i] - b[i]) <= 1e-5f * (1.0f + std::abs(b[i]))))
      return QString("element %1: fused %2, one by one %3").arg(i).arg(a[i]).arg(b[i]);
  return "";
}

// A body under construction: its inputs, and the fused node's inputs they stand for.
struct BodyBuilder {
  std::vector<Value> bodyInputs, nodeInputs;
  int next = 0;

  Value input(const TensorType& type) {
    std::string name = "x" + std::to_string(bodyInputs.size());
    bodyInputs.push_back(graph::makeInput(name, type));
    nodeInputs.push_back(graph::makeInput("outer." + name, type));
    return bodyInputs.back();
  }
  // An input whose value the outer graph knows (a weight or a shape).
  Value constantInput(const runtime::NDArray& data) {
    std::string name = "x" + std::to_string(bodyInputs.size());
    Value outer = graph::makeConstant("outer." + name, data);
    bodyInputs.push_back(graph::makeInput(name, outer.type()));
    nodeInputs.push_back(outer);
    return bodyInputs.back();
  }
  // A constant inside the body, as FuseOps keeps the ones read by value (Reshape's shape).
  Value bodyConstant(const runtime::NDArray& data) { return graph::makeConstant("c" + std::to_string(next++), data); }
  // Operations follow opset 13 (ReduceMean's axes as an attribute, Softmax along one axis).
  Value op(const std::string& type, std::vector<Value> inputs, TensorType result, graph::Attributes attributes = {}) {
    std::string name = type + std::to_string(next++);
    return graph::makeOperation(name, type, std::move(inputs), std::move(attributes), {std::move(result)},
                                {graph::Provenance{name, type, 13}})[0];
  }
  Ref<graph::GraphNode> fuse(const std::string& name, Value output) {
    graph::Graph body;
    body.inputs = bodyInputs;
    body.outputs = {output};
    return graph::makeFusedOperation(name, name, nodeInputs, std::move(body), {})[0].nodeRef();
  }
};

const graph::OperationNode& operation(const Ref<graph::GraphNode>& node) { return *graph::asOperation(node.get()); }

// Stores per buffer name in a lowered function.
std::map<std::string, int> storesByBuffer(const Stmt& body) {
  struct Counter : IRVisitor {
    std::map<std::string, int> counts;
    void visit(const BufferStoreNode* node) override {
      ++counts[node->buffer.name()];
      IRVisitor::visit(node);
    }
  } counter;
  counter.visitStmt(body);
  return counter.counts;
}

// A fused operation and inputs to run it on.
struct FusedCase {
  Ref<graph::GraphNode> fused;
  std::vector<runtime::NDArray> inputs;
};

FusedCase convBiasRelu() {
  BodyBuilder b;
  Value data = b.input(f32({1, 8, 10, 12}));
  Value weight = b.input(f32({20, 8, 3, 3}));
  Value bias = b.input(f32({20, 1, 1}));
  Value conv = b.op("Conv", {data, weight}, f32({1, 20, 10, 12}), {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Value added = b.op("Add", {conv, bias}, f32({1, 20, 10, 12}));
  return {b.fuse("fused_conv_add_relu", b.op("Relu", {added}, f32({1, 20, 10, 12}))),
          {patternArray({1, 8, 10, 12}, 1), patternArray({20, 8, 3, 3}, 2), patternArray({20, 1, 1}, 3)}};
}

FusedCase convResidualRelu() {
  BodyBuilder b;
  Value data = b.input(f32({1, 16, 8, 8}));
  Value weight = b.input(f32({16, 16, 1, 1}));
  Value shortcut = b.input(f32({1, 16, 8, 8}));
  Value conv = b.op("Conv", {data, weight}, f32({1, 16, 8, 8}));
  Value added = b.op("Add", {conv, shortcut}, f32({1, 16, 8, 8}));
  return {b.fuse("fused_conv_add_relu", b.op("Relu", {added}, f32({1, 16, 8, 8}))),
          {patternArray({1, 16, 8, 8}, 1), patternArray({16, 16, 1, 1}, 2), patternArray({1, 16, 8, 8}, 3)}};
}

FusedCase matmulBiasRelu() {
  BodyBuilder b;
  Value a = b.input(f32({24, 40}));
  Value w = b.input(f32({40, 48}));
  Value bias = b.input(f32({48}));
  Value product = b.op("MatMul", {a, w}, f32({24, 48}));
  Value added = b.op("Add", {product, bias}, f32({24, 48}));
  return {b.fuse("fused_matmul_add_relu", b.op("Relu", {added}, f32({24, 48}))),
          {patternArray({24, 40}, 4), patternArray({40, 48}, 5), patternArray({48}, 6)}};
}

FusedCase gemmRelu() {
  BodyBuilder b;
  Value a = b.input(f32({16, 40}));
  Value w = b.input(f32({36, 40}));
  Value bias = b.input(f32({36}));
  Value product = b.op("Gemm", {a, w, bias}, f32({16, 36}), {{"transB", int64_t(1)}});
  return {b.fuse("fused_gemm_relu", b.op("Relu", {product}, f32({16, 36}))),
          {patternArray({16, 40}, 4), patternArray({36, 40}, 5), patternArray({36}, 6)}};
}

FusedCase transposeReshape() {
  BodyBuilder b;
  Value x = b.input(f32({2, 3, 4, 5}));
  Value transposed = b.op("Transpose", {x}, f32({2, 4, 3, 5}), {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  Value shape = b.bodyConstant(int64Array({2, 12, 5}));
  return {b.fuse("fused_transpose_reshape", b.op("Reshape", {transposed, shape}, f32({2, 12, 5}))),
          {patternArray({2, 3, 4, 5}, 7)}};
}

FusedCase squaredDifferenceMean() {
  BodyBuilder b;
  Value x = b.input(f32({4, 6, 40}));
  Value y = b.input(f32({4, 6, 40}));
  Value difference = b.op("Sub", {x, y}, f32({4, 6, 40}));
  Value squared = b.op("Mul", {difference, difference}, f32({4, 6, 40}));
  return {b.fuse("fused_sub_mul_mean",
                 b.op("ReduceMean", {squared}, f32({4, 6, 1}), {{"axes", std::vector<int64_t>{2}}})),
          {patternArray({4, 6, 40}, 8), patternArray({4, 6, 40}, 9)}};
}

FusedCase softmaxScale() {
  BodyBuilder b;
  Value x = b.input(f32({8, 40}));
  Value scale = b.input(f32({40}));
  Value probabilities = b.op("Softmax", {x}, f32({8, 40}), {{"axis", int64_t(-1)}});
  return {b.fuse("fused_softmax_mul", b.op("Mul", {probabilities, scale}, f32({8, 40}))),
          {patternArray({8, 40}, 10), patternArray({40}, 11)}};
}

// The mean's output is a reduction computed at root: the Relu cannot be merged into it, so
// the kernel keeps the mean in a buffer of its own.
FusedCase meanRelu() {
  BodyBuilder b;
  Value x = b.input(f32({6, 50}));
  Value mean = b.op("ReduceMean", {x}, f32({6, 1}), {{"axes", std::vector<int64_t>{1}}});
  return {b.fuse("fused_mean_relu", b.op("Relu", {mean}, f32({6, 1}))), {patternArray({6, 50}, 12)}};
}

// DenseNet's layer input: the block's features so far joined along the channels, then batch
// norm and Relu; planes of 7x5, a multiple of no vector width.
FusedCase concatBatchNormRelu() {
  BodyBuilder b;
  Value x0 = b.input(f32({1, 16, 7, 5}));
  Value x1 = b.input(f32({1, 8, 7, 5}));
  Value x2 = b.input(f32({1, 8, 7, 5}));
  Value scale = b.input(f32({32, 1, 1}));
  Value shift = b.input(f32({32, 1, 1}));
  Value joined = b.op("Concat", {x0, x1, x2}, f32({1, 32, 7, 5}), {{"axis", int64_t(1)}});
  Value scaled = b.op("Mul", {joined, scale}, f32({1, 32, 7, 5}));
  Value shifted = b.op("Add", {scaled, shift}, f32({1, 32, 7, 5}));
  return {b.fuse("fused_concat_mul_add_relu", b.op("Relu", {shifted}, f32({1, 32, 7, 5}))),
          {patternArray({1, 16, 7, 5}, 13), patternArray({1, 8, 7, 5}, 14), patternArray({1, 8, 7, 5}, 15),
           patternArray({32, 1, 1}, 16), patternArray({32, 1, 1}, 17)}};
}

const std::map<QString, FusedCase (*)()>& fusedCases() {
  static const std::map<QString, FusedCase (*)()> cases = {
      {"conv+add(bias)+relu", convBiasRelu},     {"conv+add(residual)+relu", convResidualRelu},
      {"matmul+add+relu", matmulBiasRelu},       {"gemm+relu", gemmRelu},
      {"transpose+reshape", transposeReshape},   {"sub+mul+reducemean", squaredDifferenceMean},
      {"softmax+mul", softmaxScale},             {"reducemean+relu", meanRelu},
      {"concat+mul+add+relu", concatBatchNormRelu},
  };
  return cases;
}
}  // namespace

class TestFusedKernel : public QObject {
  Q_OBJECT

  // The fused kernel's lowered function.
  PrimFunc lowerFused(const Ref<graph::GraphNode>& fused) {
    auto kernel = driver::composeFusedKernel(operation(fused), hostTarget(), testRegistry());
    if (!kernel) return PrimFunc();
    auto schedule = kernel->schedule(kernel->workload, hostTarget());
    if (!schedule) return PrimFunc();
    auto lowered = lower(*schedule, kernel->workload.args(), kernel->workload.name);
    return lowered ? lowered->func : PrimFunc();
  }

private slots:
  // The tensor-expression edits fusion is made of, on a two-stage pipeline A -> B -> C.
  void rewireCopiesAPipelineOntoAnotherInput() {
    te::Tensor A = te::placeholder({Expr(4)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(4)}, [&](Var i) { return A(i) * 2.0f; }, "B");
    te::Tensor C = te::compute({Expr(4)}, [&](Var i) { return B(i) + 1.0f; }, "C");
    te::Tensor R = te::placeholder({Expr(4)}, DataType::float32(), "R");
    auto copies = te::rewire({C}, {{A.op().get(), R}}, [](const std::string& name) { return "op1." + name; });
    QCOMPARE(copies.size(), size_t(1));
    const te::ComputeOpNode* copyOfC = te::asCompute(copies[0].op());
    QCOMPARE(QString::fromStdString(copyOfC->name), QString("op1.C"));
    QCOMPARE(QString::fromStdString(toString(copyOfC->body)), QString("op1.B[i] + 1.0f"));
    const te::ComputeOpNode* copyOfB = te::asCompute(copyOfC->inputs.at(0).op());
    QCOMPARE(QString::fromStdString(toString(copyOfB->body)), QString("R[i]*2.0f"));
    QVERIFY(copyOfB->inputs.at(0) == R);
    // The original pipeline is untouched.
    QCOMPARE(QString::fromStdString(toString(te::asCompute(C.op())->body)), QString("B[i] + 1.0f"));
  }

  void inlineReadsSubstitutesBodiesAtTheReadIndices() {
    te::Tensor A = te::placeholder({Expr(8)}, DataType::float32(), "A");
    te::Tensor B = te::compute({Expr(8)}, [&](Var i) { return A(i) * 2.0f; }, "B");
    te::Tensor C = te::compute({Expr(4)}, [&](Var i) { return B(i * 2) + B(i * 2 + 1); }, "C");
    Expr inlined = te::inlineReads(te::asCompute(C.op())->body, {B});
    QCOMPARE(QString::fromStdString(toString(inlined)), QString("A[i*2]*2.0f + A[i*2 + 1]*2.0f"));
    auto read = te::tensorsReadBy(inlined, {A, B, C});
    QCOMPARE(read.size(), size_t(1));
    QVERIFY(read[0] == A);
  }

  // Each group compiled as one kernel against its operations' kernels run one by one, with
  // this test's operator definitions (the composition alone) and with the compiler's
  // registry through buildKernelForNode (what the driver calls).
  void fusedKernelMatchesItsPrimitives_data() {
    QTest::addColumn<QString>("group");
    QTest::addColumn<bool>("compilerRegistry");
    for (auto& [name, make] : fusedCases()) {
      QTest::newRow(qPrintable(name + " (test operators)")) << name << false;
      QTest::newRow(qPrintable(name + " (operator registry)")) << name << true;
    }
  }
  void fusedKernelMatchesItsPrimitives() {
    QFETCH(QString, group);
    QFETCH(bool, compilerRegistry);
    FusedCase c = fusedCases().at(group)();
    const graph::OperationNode& node = operation(c.fused);
    const graph::OpRegistry& registry = compilerRegistry ? graph::OpRegistry::global() : testRegistry();
    auto kernel = compilerRegistry ? driver::buildKernelForNode(node, hostTarget())
                                   : driver::composeFusedKernel(node, hostTarget(), testRegistry());
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    auto outputs = runKernel(*kernel, c.inputs);
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(differences(outputs[0], runPrimitivesOneByOne(node, c.inputs, registry)), QString());
  }

  void concatWithBatchNormCopiesEachInputByItself() {
    // Every element of a K-input Concat read through a chain of K selects (and clamped
    // indices that made its vectors gathers) ran DenseNet-121's 60 such kernels at 3% of their
    // memory bound: each input is now copied by a loop of its own, in contiguous vectors.
    PrimFunc f = lowerFused(concatBatchNormRelu().fused);
    QVERIFY(f.defined());
    QString text = QString::fromStdString(toString(f));
    QVERIFY2(!text.contains("select(") && !text.contains("//broadcast(") && text.contains("ramp("), qPrintable(text));
  }

  void prepackedLayersFromThePassesMatchTheirPrimitives_data() {
    QTest::addColumn<bool>("dense");
    QTest::newRow("conv with constant weight and bias, relu") << false;
    QTest::newRow("matmul with constant weight, bias add, relu") << true;
  }
  void prepackedLayersFromThePassesMatchTheirPrimitives() {
    // What ResNet and MobileNet are made of, through the passes that make it: AlterLayout
    // packs the constant weight (ConvPrepacked / DensePrepacked) and FuseOps groups the
    // layer with its epilogue. The fused kernel keeps the anchor's output stage.
    QFETCH(bool, dense);
    Shape dataShape = dense ? Shape{12, 40} : Shape{1, 8, 10, 12};
    Shape outShape = dense ? Shape{12, 36} : Shape{1, 20, 10, 12};
    Value data = graph::makeInput("data", f32(dataShape));
    Value weight = graph::makeConstant("weight", patternArray(dense ? Shape{40, 36} : Shape{20, 8, 3, 3}, 2));
    Value bias = graph::makeConstant("bias", patternArray({outShape[1]}, 3));
    Value layer = dense ? graph::makeOperation("fc", "MatMul", {data, weight}, {}, {f32(outShape)})[0]
                        : graph::makeOperation("conv", "Conv", {data, weight, bias},
                                               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {f32(outShape)})[0];
    if (dense) layer = graph::makeOperation("bias_add", "Add", {layer, bias}, {}, {f32(outShape)})[0];
    Value relu = graph::makeOperation("relu", "Relu", {layer}, {}, {f32(outShape)})[0];
    graph::Graph model{{data}, {relu}, {"out"}};
    auto packed = graph::alterLayout(model);
    QVERIFY2(packed.ok(), packed.ok() ? "" : packed.error().toString().c_str());
    auto fusedModel = graph::fuseOps(*packed);
    QVERIFY2(fusedModel.ok(), fusedModel.ok() ? "" : fusedModel.error().toString().c_str());
    auto operations = fusedModel->operations();
    QCOMPARE(operations.size(), size_t(1));
    const graph::OperationNode& node = *operations[0];
    QVERIFY(node.isFused());

    auto kernel = driver::buildKernelForNode(node, hostTarget());
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    std::vector<runtime::NDArray> inputs;
    for (const Value& input : node.inputs) {
      const graph::ConstantNode* constant = graph::asConstant(input.node());
      inputs.push_back(constant ? constant->data : patternArray(input.type().shape, 1));
    }
    auto outputs = runKernel(*kernel, inputs);
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(differences(outputs[0], runPrimitivesOneByOne(node, inputs, graph::OpRegistry::global())), QString());
    // The epilogue went into the layer's output stage: conv's "conv", or the stage that
    // takes over matmul's "C" loops.
    QString output = QString::fromStdString(kernel->workload.outputs[0].name());
    QVERIFY2(output == (dense ? "C.epilogue" : "conv"), qPrintable("the output stage is " + output));
  }

  void convEpilogueWritesEachOutputOnceWithoutIntermediates() {
    auto fused = convBiasRelu().fused;
    PrimFunc func = lowerFused(fused);
    QVERIFY(func.defined());
    // The convolution alone, as the registry compiles it.
    const graph::OperationNode* conv = operation(fused).body->operations().front();
    auto convKernel = testRegistry().find("Conv")->build(graph::makeOpCall(*conv));
    QVERIFY(convKernel.ok());
    auto convSchedule = convKernel->schedule(convKernel->workload, hostTarget());
    QVERIFY(convSchedule.ok());
    auto convAlone = lower(*convSchedule, convKernel->workload.args(), "conv_alone");
    QVERIFY(convAlone.ok());

    // Fusing the Add and the Relu adds no buffer and no store: the kernel writes what the
    // convolution alone writes (its padding, packed weights and accumulators, and each
    // output element once), with the epilogue applied on the way out.
    auto fusedStores = storesByBuffer(func->body);
    auto convStores = storesByBuffer(convAlone->func->body);
    QStringList fusedBuffers, convBuffers;
    for (auto& [buffer, count] : fusedStores) fusedBuffers << QString::fromStdString(buffer);
    for (auto& [buffer, count] : convStores) convBuffers << QString::fromStdString(buffer);
    QCOMPARE(fusedBuffers, convBuffers);
    const std::string output = func->params.back().name();
    QCOMPARE(output, convAlone->func->params.back().name());
    QCOMPARE(fusedStores[output], convStores[output]);
    QVERIFY2(toString(func).find("max(") != std::string::npos, "the relu is not in the kernel");
  }

  void matmulEpilogueLeavesNoIntermediateInMemory() {
    // The accumulator tile stays in registers and the epilogue writes the result: no global
    // buffer for the product or the sum.
    PrimFunc func = lowerFused(matmulBiasRelu().fused);
    QVERIFY(func.defined());
    auto stores = storesByBuffer(func->body);
    QVERIFY(!stores.empty());
    for (auto& [buffer, count] : stores)
      QVERIFY2(buffer != "C" && buffer.rfind("op", 0) != 0, ("intermediate " + buffer + " reached memory").c_str());
  }

  void inputNeededOnlyByValueIsNotAnArgument() {
    // The reshape's target shape comes in as an input of the fused node whose value the
    // graph knows: the kernel reads it at compile time, so only the data is an argument.
    BodyBuilder b;
    Value x = b.input(f32({2, 3, 4, 5}));
    Value shape = b.constantInput(int64Array({2, 12, 5}));
    Value transposed = b.op("Transpose", {x}, f32({2, 4, 3, 5}), {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    auto fused = b.fuse("fused_transpose_reshape", b.op("Reshape", {transposed, shape}, f32({2, 12, 5})));
    auto kernel = driver::composeFusedKernel(operation(fused), hostTarget(), testRegistry());
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    QCOMPARE(kernel->inputIndices, std::vector<int>{0});
    std::vector<runtime::NDArray> inputs = {patternArray({2, 3, 4, 5}, 7), int64Array({2, 12, 5})};
    auto outputs = runKernel(*kernel, inputs);
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(differences(outputs[0], runPrimitivesOneByOne(operation(fused), inputs, testRegistry())), QString());
  }

  void scheduleThatDoesNotFitTheGroupCostsSpeedNotCorrectness() {
    // The anchor's schedule names its own input, which the fused kernel replaced by the
    // negation's stage: it cannot be replayed, and the kernel falls back to a slower form.
    BodyBuilder b;
    Value x = b.input(f32({5, 33}));
    Value negated = b.op("Sub", {b.input(f32({5, 33})), x}, f32({5, 33}));
    auto fused = b.fuse("fused_sub_cachedrelu", b.op("CachedRelu", {negated}, f32({5, 33})));
    std::vector<runtime::NDArray> inputs = {patternArray({5, 33}, 13), patternArray({5, 33}, 14)};
    auto kernel = driver::composeFusedKernel(operation(fused), hostTarget(), testRegistry());
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    auto schedule = kernel->schedule(kernel->workload, hostTarget());
    QVERIFY(schedule.ok());
    for (const Primitive& step : schedule->trace().primitives)
      QVERIFY2(step.kind != PrimitiveKind::CacheRead, "the anchor's schedule was replayed after all");
    auto outputs = runKernel(*kernel, inputs);
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(differences(outputs[0], runPrimitivesOneByOne(operation(fused), inputs, testRegistry())), QString());
  }

  void kernelReadingAValueUnderAnotherShapeMatchesThePrimitives() {
    BodyBuilder b;
    Value x = b.input(f32({2, 3, 7}));
    Value difference = b.op("Sub", {x, b.input(f32({2, 3, 7}))}, f32({2, 3, 7}));
    auto fused = b.fuse("fused_sub_flatrelu", b.op("FlatRelu", {difference}, f32({42})));
    std::vector<runtime::NDArray> inputs = {patternArray({2, 3, 7}, 15), patternArray({2, 3, 7}, 16)};
    auto kernel = driver::composeFusedKernel(operation(fused), hostTarget(), testRegistry());
    QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
    auto outputs = runKernel(*kernel, inputs);
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(differences(outputs[0], runPrimitivesOneByOne(operation(fused), inputs, testRegistry())), QString());
  }

  void unknownBodyOperatorIsADiagnosticNamingTheNode() {
    BodyBuilder b;
    Value x = b.input(f32({4}));
    auto fused = b.fuse("fused_mystery", b.op("Mystery", {x}, f32({4})));
    auto kernel = driver::composeFusedKernel(operation(fused), hostTarget(), testRegistry());
    QVERIFY(!kernel.ok());
    QVERIFY2(kernel.error().message.find("fused_mystery") != std::string::npos, kernel.error().message.c_str());
    QVERIFY2(kernel.error().message.find("Mystery") != std::string::npos, kernel.error().message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestFusedKernel)
#include "test_fused_kernel.moc"
