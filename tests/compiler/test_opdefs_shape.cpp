// The shape and data-movement operator definitions (registerShapeOps): kernels built through
// the registry from OpCalls, JIT-compiled and compared with C++ references of the ONNX
// semantics; attribute/input conventions across opsets; Diagnostics for bad models.
#include <QtTest>

#include <cmath>
#include <map>

#include "OpsTestSupport.h"
#include "compiler/opdefs/OpRegistry.h"

using namespace tessel;
using namespace tessel::testing;
using graph::OpCall;
using graph::TensorType;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {
using Shape = std::vector<int64_t>;

runtime::NDArray intConstant(const std::vector<int64_t>& values, const Shape& shape) {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::int64());
  array.copyFrom(values);
  return array;
}
runtime::NDArray intConstant(const std::vector<int64_t>& values) {
  return intConstant(values, {int64_t(values.size())});
}
runtime::NDArray floatConstant(const std::vector<float>& values, const Shape& shape) {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
  array.copyFrom(values);
  return array;
}

/// An OpCall under construction: runtime inputs by type, constant inputs by value.
struct CallBuilder {
  OpCall call;
  explicit CallBuilder(std::string op, int opset = 0) {
    call.op = std::move(op);
    call.nodeName = "node_" + call.op;
    call.opset = opset;
  }
  CallBuilder& input(const Shape& shape, DataType dtype = DataType::float32()) {
    call.inputTypes.push_back(TensorType{dtype, shape, ""});
    call.constantInputs.emplace_back();
    return *this;
  }
  CallBuilder& constant(const runtime::NDArray& data, DataType dtype) {
    call.inputTypes.push_back(TensorType{dtype, data.shape(), ""});
    call.constantInputs.push_back(data);
    return *this;
  }
  CallBuilder& ints(const std::vector<int64_t>& values) { return constant(intConstant(values), DataType::int64()); }
  CallBuilder& omitted() {
    call.inputTypes.emplace_back();
    call.constantInputs.emplace_back();
    return *this;
  }
  CallBuilder& attr(const std::string& key, graph::Attribute value) {
    call.attributes[key] = std::move(value);
    return *this;
  }
  CallBuilder& outputs(int count) {
    call.outputCount = count;
    return *this;
  }
};

/// Infers types, builds the kernel through the registry, runs it under its own schedule
/// (on a small target with 2 threads and 8 lanes, and on the host) with `inputs` given for
/// the node inputs it reads, and returns the outputs; checks that the inferred types are
/// what the kernel produced. Empty on failure (the test has failed already).
std::vector<HostTensor> runCall(const OpCall& call, const std::map<int, HostTensor>& inputs) {
  auto types = graph::inferOpTypes(call);
  if (!types) {
    QTest::qFail(types.error().toString().c_str(), __FILE__, __LINE__);
    return {};
  }
  auto kernel = graph::buildOpKernel(call);
  if (!kernel) {
    QTest::qFail(kernel.error().toString().c_str(), __FILE__, __LINE__);
    return {};
  }
  std::vector<HostTensor> args;
  for (int index : kernel->inputIndices) {
    auto it = inputs.find(index);
    if (it == inputs.end()) {
      QTest::qFail(("the kernel reads input " + std::to_string(index) + " the test did not give").c_str(), __FILE__,
                   __LINE__);
      return {};
    }
    args.push_back(it->second);
  }
  Target small;
  small.vectorBits = 32 * 8;
  small.cores = 2;
  std::vector<HostTensor> first;
  for (const Target& target : {small, hostTarget()}) {
    auto schedule = kernel->schedule(kernel->workload, target);
    if (!schedule) {
      QTest::qFail(schedule.error().toString().c_str(), __FILE__, __LINE__);
      return {};
    }
    auto got = runWorkload(kernel->workload, *schedule, args);
    if (got.size() != types->size()) {
      QTest::qFail("the kernel's outputs do not match the inferred types", __FILE__, __LINE__);
      return {};
    }
    for (size_t k = 0; k < got.size(); ++k)
      if (got[k].shape != (*types)[k].shape) {
        QTest::qFail(("output " + std::to_string(k) + " has shape " + shapeName(got[k].shape) + ", inferred " +
                      shapeName((*types)[k].shape))
                         .c_str(),
                     __FILE__, __LINE__);
        return {};
      }
    if (first.empty())
      first = got;
    else
      for (size_t k = 0; k < got.size(); ++k)
        if (!compareTensors(got[k], first[k]).empty()) {
          QTest::qFail("the host schedule disagrees with the small target's", __FILE__, __LINE__);
          return {};
        }
  }
  return first;
}

/// runCall, then every output compared with `expected`.
void checkCall(const OpCall& call, const std::map<int, HostTensor>& inputs, const std::vector<HostTensor>& expected,
               double tolerance = 0) {
  auto got = runCall(call, inputs);
  QCOMPARE(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    std::string problem = compareTensors(got[k], expected[k], tolerance);
    QVERIFY2(problem.empty(), (call.op + " output " + std::to_string(k) + ": " + problem).c_str());
  }
}

/// The Diagnostic `call` fails with (at type inference), or an empty message when it passes.
QString diagnosticOf(const OpCall& call) {
  auto types = graph::inferOpTypes(call);
  return types.ok() ? QString() : QString::fromStdString(types.error().toString());
}

HostTensor sameValues(const HostTensor& in, const Shape& shape) { return HostTensor{shape, in.values}; }

double at(const HostTensor& t, const Shape& index) { return t.values[size_t(offsetOf(t.shape, index))]; }
}  // namespace

class TestOpdefsShape : public QObject {
  Q_OBJECT
 private slots:
  void everyShapeOperatorIsRegistered() {
    // FuseOps merges data movement into its neighbours only when it is injective.
    for (const char* name : {"Reshape",    "Flatten", "Squeeze",      "Unsqueeze",       "Transpose", "Concat",
                             "Split",      "Slice",   "Gather",       "GatherElements",  "GatherND",  "Expand",
                             "Tile",       "Pad",     "DepthToSpace", "SpaceToDepth",    "Resize",    "Upsample",
                             "GridSample", "Trilu",   "OneHot",       "ReverseSequence", "Compress"}) {
      const graph::OpDef* def = graph::OpRegistry::global().find(name);
      QVERIFY2(def, name);
      QCOMPARE(int(def->pattern), int(graph::OpPattern::Injective));
    }
    for (const char* name :
         {"Shape", "Size", "ConstantOfShape", "Range", "EyeLike", "NonZero", "ScatterElements", "ScatterND", "Scatter"})
      QVERIFY2(graph::OpRegistry::global().find(name), name);
  }

  void reshapeFamilyKeepsRowMajorOrder() {
    HostTensor in = distinctTensor({2, 3, 4});
    checkCall(CallBuilder("Reshape").input({2, 3, 4}).ints({0, -1}).call, {{0, in}}, {sameValues(in, {2, 12})});
    checkCall(CallBuilder("Reshape").input({2, 3, 4}).ints({4, 0, 2}).attr("allowzero", int64_t(0)).call, {{0, in}},
              {sameValues(in, {4, 3, 2})});
    checkCall(CallBuilder("Flatten").input({2, 3, 4}).call, {{0, in}}, {sameValues(in, {2, 12})});
    checkCall(CallBuilder("Flatten").input({2, 3, 4}).attr("axis", int64_t(-1)).call, {{0, in}},
              {sameValues(in, {6, 4})});
    checkCall(CallBuilder("Flatten").input({2, 3, 4}).attr("axis", int64_t(0)).call, {{0, in}},
              {sameValues(in, {1, 24})});
    HostTensor ones = distinctTensor({1, 5, 1});
    // Squeeze/Unsqueeze axes: an attribute before opset 13, an input after; both accepted.
    checkCall(CallBuilder("Squeeze", 11).input({1, 5, 1}).attr("axes", Shape{-1}).call, {{0, ones}},
              {sameValues(ones, {1, 5})});
    checkCall(CallBuilder("Squeeze", 13).input({1, 5, 1}).ints({0}).call, {{0, ones}}, {sameValues(ones, {5, 1})});
    checkCall(CallBuilder("Squeeze", 13).input({1, 5, 1}).call, {{0, ones}}, {sameValues(ones, {5})});
    checkCall(CallBuilder("Unsqueeze", 11).input({2, 3, 4}).attr("axes", Shape{0, 4}).call, {{0, in}},
              {sameValues(in, {1, 2, 3, 4, 1})});
    checkCall(CallBuilder("Unsqueeze", 13).input({2, 3, 4}).ints({-1, 1}).call, {{0, in}},
              {sameValues(in, {2, 1, 3, 4, 1})});
    HostTensor scalar = distinctTensor({});
    checkCall(CallBuilder("Unsqueeze", 13).input({}).ints({0}).call, {{0, scalar}}, {sameValues(scalar, {1})});
  }

  void transposeConcatAndSplitFollowOnnx() {
    HostTensor in = distinctTensor({2, 3, 4});
    HostTensor transposed = makeTensor({4, 2, 3}, [&](int64_t i) {
      Shape o = indexOf({4, 2, 3}, i);
      return at(in, {o[1], o[2], o[0]});
    });
    checkCall(CallBuilder("Transpose").input({2, 3, 4}).attr("perm", Shape{2, 0, 1}).call, {{0, in}}, {transposed});
    HostTensor reversed = makeTensor({4, 3, 2}, [&](int64_t i) {
      Shape o = indexOf({4, 3, 2}, i);
      return at(in, {o[2], o[1], o[0]});
    });
    checkCall(CallBuilder("Transpose").input({2, 3, 4}).call, {{0, in}}, {reversed});

    HostTensor other = distinctTensor({2, 1, 4}, 5);
    HostTensor joined = makeTensor({2, 4, 4}, [&](int64_t i) {
      Shape o = indexOf({2, 4, 4}, i);
      return o[1] < 3 ? at(in, o) : at(other, {o[0], 0, o[2]});
    });
    checkCall(CallBuilder("Concat").input({2, 3, 4}).input({2, 1, 4}).attr("axis", int64_t(-2)).call,
              {{0, in}, {1, other}}, {joined});

    // Split sizes: attribute before opset 13, input after; equal parts from the output count.
    auto piece = [&](int64_t begin, int64_t size) {
      return makeTensor({2, 3, size}, [&, begin, size](int64_t i) {
        Shape o = indexOf({2, 3, size}, i);
        return at(in, {o[0], o[1], o[2] + begin});
      });
    };
    checkCall(
        CallBuilder("Split", 11).input({2, 3, 4}).attr("axis", int64_t(2)).attr("split", Shape{1, 3}).outputs(2).call,
        {{0, in}}, {piece(0, 1), piece(1, 3)});
    checkCall(CallBuilder("Split", 13).input({2, 3, 4}).ints({3, 1}).attr("axis", int64_t(-1)).outputs(2).call,
              {{0, in}}, {piece(0, 3), piece(3, 1)});
    checkCall(CallBuilder("Split", 13).input({2, 3, 4}).attr("axis", int64_t(2)).outputs(4).call, {{0, in}},
              {piece(0, 1), piece(1, 1), piece(2, 1), piece(3, 1)});
  }

  void sliceAttributesAndInputsAgree() {
    HostTensor in = distinctTensor({5, 6});
    // Rows 4, 2 (backwards by 2 from the end), columns 1..3.
    HostTensor want = makeTensor({2, 3}, [&](int64_t i) {
      Shape o = indexOf({2, 3}, i);
      return at(in, {4 - 2 * o[0], 1 + o[1]});
    });
    checkCall(CallBuilder("Slice", 13).input({5, 6}).ints({-1, 1}).ints({1, 4}).ints({0, 1}).ints({-2, 1}).call,
              {{0, in}}, {want});
    HostTensor columns = makeTensor({5, 3}, [&](int64_t i) {
      Shape o = indexOf({5, 3}, i);
      return at(in, {o[0], 3 + o[1]});
    });
    checkCall(CallBuilder("Slice", 1)
                  .input({5, 6})
                  .attr("starts", Shape{3})
                  .attr("ends", Shape{1000})
                  .attr("axes", Shape{1})
                  .call,
              {{0, in}}, {columns});
    checkCall(CallBuilder("Slice", 13).input({5, 6}).ints({3}).ints({1000}).ints({-1}).call, {{0, in}}, {columns});
  }

  void padModesFollowNumpy_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("pads");
    QTest::newRow("constant") << "constant" << Shape{3, 4} << Shape{1, 2, 0, 3};
    QTest::newRow("reflect") << "reflect" << Shape{3, 4} << Shape{2, 3, 1, 2};
    QTest::newRow("reflect wider than the axis") << "reflect" << Shape{2, 3} << Shape{0, 5, 0, 4};
    QTest::newRow("edge") << "edge" << Shape{1, 3, 4} << Shape{0, 2, 1, 0, 3, 2};
    QTest::newRow("edge with a crop") << "edge" << Shape{4, 5} << Shape{-1, 2, 1, -2};
    QTest::newRow("wrap") << "wrap" << Shape{2, 3} << Shape{1, 4, 2, 1};
  }
  void padModesFollowNumpy() {
    QFETCH(QString, mode);
    QFETCH(Shape, shape);
    QFETCH(Shape, pads);
    size_t rank = shape.size();
    Shape outShape(rank);
    for (size_t d = 0; d < rank; ++d) outShape[d] = shape[d] + pads[d] + pads[d + rank];
    HostTensor in = distinctTensor(shape);
    const double value = 7.5;
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape o = indexOf(outShape, i);
      for (size_t d = 0; d < rank; ++d) {
        int64_t x = o[d] - pads[d], n = shape[d];
        if (x >= 0 && x < n) {
          o[d] = x;
          continue;
        }
        if (mode == "constant") return value;
        if (mode == "edge")
          o[d] = x < 0 ? 0 : n - 1;
        else if (mode == "wrap")
          o[d] = ((x % n) + n) % n;
        else {  // numpy reflect: bounce between the ends until inside
          while (x < 0 || x >= n) x = x < 0 ? -x : 2 * (n - 1) - x;
          o[d] = x;
        }
      }
      return at(in, o);
    });
    // Opset 2: pads and value are attributes; opset 11+: inputs.
    if (mode != "wrap")  // wrap came with opset 19
      checkCall(CallBuilder("Pad", 2)
                    .input(shape)
                    .attr("mode", mode.toStdString())
                    .attr("pads", pads)
                    .attr("value", value)
                    .call,
                {{0, in}}, {want});
    checkCall(CallBuilder("Pad", 13)
                  .input(shape)
                  .ints(pads)
                  .constant(floatConstant({float(value)}, {}), DataType::float32())
                  .attr("mode", mode.toStdString())
                  .call,
              {{0, in}}, {want});
  }

  void tileAndExpandRepeatTheInput() {
    HostTensor in = distinctTensor({2, 3});
    HostTensor tiled = makeTensor({4, 9}, [&](int64_t i) {
      Shape o = indexOf({4, 9}, i);
      return at(in, {o[0] % 2, o[1] % 3});
    });
    checkCall(CallBuilder("Tile").input({2, 3}).ints({2, 3}).call, {{0, in}}, {tiled});
    HostTensor column = distinctTensor({3, 1});
    HostTensor expanded = makeTensor({2, 3, 4}, [&](int64_t i) { return at(column, {indexOf({2, 3, 4}, i)[1], 0}); });
    checkCall(CallBuilder("Expand").input({3, 1}).ints({2, 1, 4}).call, {{0, column}}, {expanded});
  }

  void gathersReadIndexedElements() {
    HostTensor data = distinctTensor({4, 5});
    HostTensor rows = HostTensor{{3}, {3, -1, 0}};
    HostTensor gathered = makeTensor({4, 3}, [&](int64_t i) {
      Shape o = indexOf({4, 3}, i);
      int64_t column = int64_t(rows.values[size_t(o[1])]);
      return at(data, {o[0], column < 0 ? column + 5 : column});
    });
    checkCall(CallBuilder("Gather").input({4, 5}).input({3}, DataType::int64()).attr("axis", int64_t(1)).call,
              {{0, data}, {1, rows}}, {gathered});

    HostTensor elementIndices = HostTensor{{2, 5}, {0, 3, -1, 2, 1, 3, 3, 0, 1, -4}};
    HostTensor elements = makeTensor({2, 5}, [&](int64_t i) {
      Shape o = indexOf({2, 5}, i);
      int64_t row = int64_t(elementIndices.values[size_t(i)]);
      return at(data, {row < 0 ? row + 4 : row, o[1]});
    });
    checkCall(CallBuilder("GatherElements").input({4, 5}).input({2, 5}, DataType::int32()).call,
              {{0, data}, {1, elementIndices}}, {elements});

    // GatherND with one batch axis: each batch entry picks rows of its own matrix.
    HostTensor cube = distinctTensor({2, 3, 4});
    HostTensor tuples = HostTensor{{2, 2, 1}, {2, 0, -1, 1}};
    HostTensor picked = makeTensor({2, 2, 4}, [&](int64_t i) {
      Shape o = indexOf({2, 2, 4}, i);
      int64_t row = int64_t(tuples.values[size_t(o[0] * 2 + o[1])]);
      return at(cube, {o[0], row < 0 ? row + 3 : row, o[2]});
    });
    checkCall(CallBuilder("GatherND")
                  .input({2, 3, 4})
                  .input({2, 2, 1}, DataType::int64())
                  .attr("batch_dims", int64_t(1))
                  .call,
              {{0, cube}, {1, tuples}}, {picked});
    HostTensor pairs = HostTensor{{3, 2}, {0, 1, 1, 2, 0, 0}};
    HostTensor rowsOfCube = makeTensor({3, 4}, [&](int64_t i) {
      Shape o = indexOf({3, 4}, i);
      return at(cube, {int64_t(pairs.values[size_t(2 * o[0])]), int64_t(pairs.values[size_t(2 * o[0] + 1)]), o[1]});
    });
    checkCall(CallBuilder("GatherND").input({2, 3, 4}).input({3, 2}, DataType::int64()).call, {{0, cube}, {1, pairs}},
              {rowsOfCube});
  }

  void scattersWriteUpdates_data() {
    QTest::addColumn<QString>("reduction");
    for (const char* r : {"none", "add", "mul", "max", "min"}) QTest::newRow(r) << r;
  }
  void scattersWriteUpdates() {
    QFETCH(QString, reduction);
    auto combine = [&](double current, double update) {
      if (reduction == "add") return current + update;
      if (reduction == "mul") return current * update;
      if (reduction == "max") return std::max(current, update);
      if (reduction == "min") return std::min(current, update);
      return update;
    };
    // ScatterElements along axis 1, with a duplicate target in row 0 and a negative index.
    HostTensor data = makeTensor({3, 4}, [](int64_t i) { return double(i % 5) - 2; });
    HostTensor indices = HostTensor{{2, 3}, {1, 3, 1, -1, 0, 2}};
    HostTensor updates = makeTensor({2, 3}, [](int64_t i) { return double(i) + 3; });
    HostTensor want = data;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 3; ++c) {
        int64_t column = int64_t(indices.values[size_t(r * 3 + c)]);
        if (column < 0) column += 4;
        double& target = want.values[size_t(r * 4 + column)];
        target = combine(target, updates.values[size_t(r * 3 + c)]);
      }
    checkCall(CallBuilder("ScatterElements")
                  .input({3, 4})
                  .input({2, 3}, DataType::int64())
                  .input({2, 3})
                  .attr("axis", int64_t(1))
                  .attr("reduction", reduction.toStdString())
                  .call,
              {{0, data}, {1, indices}, {2, updates}}, {want});

    // ScatterND writing whole rows, one of them twice.
    HostTensor cube = makeTensor({4, 2, 3}, [](int64_t i) { return double(i % 7) - 3; });
    HostTensor rowIndices = HostTensor{{3, 1}, {2, 0, 2}};
    HostTensor rowUpdates = makeTensor({3, 2, 3}, [](int64_t i) { return double(i % 4) + 1; });
    HostTensor wantND = cube;
    for (int64_t u = 0; u < 3; ++u)
      for (int64_t k = 0; k < 6; ++k) {
        double& target = wantND.values[size_t(int64_t(rowIndices.values[size_t(u)]) * 6 + k)];
        target = combine(target, rowUpdates.values[size_t(u * 6 + k)]);
      }
    checkCall(CallBuilder("ScatterND")
                  .input({4, 2, 3})
                  .input({3, 1}, DataType::int64())
                  .input({3, 2, 3})
                  .attr("reduction", reduction.toStdString())
                  .call,
              {{0, cube}, {1, rowIndices}, {2, rowUpdates}}, {wantND});
  }

  void shapeOperatorsBecomeConstantKernels() {
    // No runtime inputs: FoldConstant folds them whatever the data input is.
    auto noInputs = [](const OpCall& call) {
      auto kernel = graph::buildOpKernel(call);
      QVERIFY2(kernel.ok(), kernel.ok() ? "" : kernel.error().toString().c_str());
      QVERIFY(kernel->inputIndices.empty());
      QVERIFY(kernel->workload.inputs.empty());
    };
    OpCall shape = CallBuilder("Shape").input({2, 3, 5, 7}).call;
    noInputs(shape);
    checkCall(shape, {}, {HostTensor{{4}, {2, 3, 5, 7}}});
    // Opset 15 bounds: negative counts from the end, out of range clamps.
    checkCall(CallBuilder("Shape", 15).input({2, 3, 5, 7}).attr("start", int64_t(-3)).attr("end", int64_t(-1)).call, {},
              {HostTensor{{2}, {3, 5}}});
    checkCall(CallBuilder("Shape", 15).input({2, 3, 5, 7}).attr("start", int64_t(-10)).attr("end", int64_t(10)).call,
              {}, {HostTensor{{4}, {2, 3, 5, 7}}});
    OpCall size = CallBuilder("Size").input({2, 3, 5, 7}).call;
    noInputs(size);
    checkCall(size, {}, {HostTensor{{}, {210}}});

    OpCall fill = CallBuilder("ConstantOfShape").ints({2, 3}).call;
    noInputs(fill);
    checkCall(fill, {}, {makeTensor({2, 3}, [](int64_t) { return 0.0; })});
    // The importer's form of the tensor attribute: elements plus "value.dtype".
    OpCall fillInts = CallBuilder("ConstantOfShape")
                          .ints({4})
                          .attr("value", std::vector<int64_t>{-3})
                          .attr("value.dtype", std::string("int32"))
                          .attr("value.shape", Shape{1})
                          .call;
    auto types = graph::inferOpTypes(fillInts);
    QVERIFY(types.ok());
    QCOMPARE((*types)[0].dtype, DataType::int32());
    checkCall(fillInts, {}, {makeTensor({4}, [](int64_t) { return -3.0; })});
    OpCall fillDoubles = CallBuilder("ConstantOfShape")
                             .ints({2, 2})
                             .attr("value", std::vector<double>{1.5})
                             .attr("value_dtype", int64_t(11))
                             .call;
    types = graph::inferOpTypes(fillDoubles);
    QVERIFY(types.ok());
    QCOMPARE((*types)[0].dtype, DataType::float64());
    checkCall(fillDoubles, {}, {makeTensor({2, 2}, [](int64_t) { return 1.5; })});

    auto scalar = [](double v) { return floatConstant({float(v)}, {}); };
    OpCall range = CallBuilder("Range")
                       .constant(scalar(1), DataType::float32())
                       .constant(scalar(2.9), DataType::float32())
                       .constant(scalar(0.5), DataType::float32())
                       .call;
    noInputs(range);
    checkCall(range, {}, {HostTensor{{4}, {1, 1.5, 2, 2.5}}});
    OpCall countdown = CallBuilder("Range")
                           .constant(intConstant({10}, {}), DataType::int64())
                           .constant(intConstant({4}, {}), DataType::int64())
                           .constant(intConstant({-3}, {}), DataType::int64())
                           .call;
    checkCall(countdown, {}, {HostTensor{{2}, {10, 7}}});

    OpCall eye = CallBuilder("EyeLike").input({3, 4}, DataType::int32()).attr("k", int64_t(1)).call;
    noInputs(eye);
    checkCall(eye, {}, {makeTensor({3, 4}, [](int64_t i) { return i % 4 - i / 4 == 1 ? 1.0 : 0.0; })});
  }

  void maskingAndEncodingOperators() {
    HostTensor in = distinctTensor({2, 3, 4});
    for (int64_t upper : {0, 1})
      for (int64_t k : {-1, 0, 2}) {
        HostTensor want = makeTensor({2, 3, 4}, [&](int64_t i) {
          Shape o = indexOf({2, 3, 4}, i);
          bool keep = upper ? o[2] - o[1] >= k : o[2] - o[1] <= k;
          return keep ? in.values[size_t(i)] : 0.0;
        });
        checkCall(CallBuilder("Trilu").input({2, 3, 4}).ints({k}).attr("upper", upper).call, {{0, in}}, {want});
      }

    HostTensor classes = HostTensor{{2, 2}, {1, -1, 0, 3}};
    HostTensor values = HostTensor{{2}, {-2, 5}};
    // A new axis of depth 4 in the middle: on where the (wrapped) index equals it.
    HostTensor want = makeTensor({2, 4, 2}, [&](int64_t i) {
      Shape o = indexOf({2, 4, 2}, i);
      int64_t c = int64_t(classes.values[size_t(o[0] * 2 + o[2])]);
      if (c < 0) c += 4;
      return c == o[1] ? 5.0 : -2.0;
    });
    checkCall(CallBuilder("OneHot").input({2, 2}, DataType::int64()).ints({4}).input({2}).attr("axis", int64_t(1)).call,
              {{0, classes}, {2, values}}, {want});
  }

  void depthAndSpaceRearrangements_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("DCR") << "DCR";
    QTest::newRow("CRD") << "CRD";
  }
  void depthAndSpaceRearrangements() {
    QFETCH(QString, mode);
    const int64_t b = 2;
    Shape shape{1, 8, 2, 3};
    HostTensor in = distinctTensor(shape);
    Shape outShape{1, 2, 4, 6};
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape o = indexOf(outShape, i);
      int64_t row = o[2] % b, column = o[3] % b;
      int64_t depth = mode == "DCR" ? (row * b + column) * 2 + o[1] : o[1] * b * b + row * b + column;
      return at(in, {o[0], depth, o[2] / b, o[3] / b});
    });
    checkCall(CallBuilder("DepthToSpace").input(shape).attr("blocksize", b).attr("mode", mode.toStdString()).call,
              {{0, in}}, {want});
    if (mode == "DCR")  // SpaceToDepth undoes DCR
      checkCall(CallBuilder("SpaceToDepth").input(outShape).attr("blocksize", b).call, {{0, want}}, {in});
  }

  void reverseSequenceCompressAndNonZero() {
    HostTensor in = distinctTensor({4, 3});  // time x batch
    HostTensor lengths = HostTensor{{3}, {4, 1, 2}};
    HostTensor want = makeTensor({4, 3}, [&](int64_t i) {
      Shape o = indexOf({4, 3}, i);
      int64_t n = int64_t(lengths.values[size_t(o[1])]);
      return at(in, {o[0] < n ? n - 1 - o[0] : o[0], o[1]});
    });
    checkCall(CallBuilder("ReverseSequence").input({4, 3}).input({3}, DataType::int64()).call, {{0, in}, {1, lengths}},
              {want});

    auto condition = runtime::NDArray::empty({4}, runtime::DataType::boolean());
    uint8_t bits[] = {0, 1, 0, 1};
    condition.copyFrom(bits, sizeof bits);
    HostTensor odd = makeTensor({2, 3}, [&](int64_t i) { return at(in, {1 + 2 * (i / 3), i % 3}); });
    checkCall(
        CallBuilder("Compress").input({4, 3}).constant(condition, DataType::boolean()).attr("axis", int64_t(0)).call,
        {{0, in}}, {odd});
    HostTensor flat = HostTensor{{2}, {in.values[1], in.values[3]}};
    checkCall(CallBuilder("Compress").input({4, 3}).constant(condition, DataType::boolean()).call, {{0, in}}, {flat});

    OpCall nonZero =
        CallBuilder("NonZero").constant(floatConstant({0, 2, 0, -1, 3, 0}, {2, 3}), DataType::float32()).call;
    checkCall(nonZero, {}, {HostTensor{{2, 3}, {0, 1, 1, 1, 0, 1}}});
    QString error = diagnosticOf(CallBuilder("NonZero").input({2, 3}).call);
    QVERIFY2(error.contains("NonZero 'node_NonZero'") && error.contains("data-dependent"), qPrintable(error));
  }

  void uniqueOfAConstant() {
    // Elements [2, 1, 1, 3, 4, 3] (flattened 2x3): sorted unique values, first positions,
    // the position of each element among them, and their counts.
    auto data = floatConstant({2, 1, 1, 3, 4, 3}, {2, 3});
    OpCall sorted = CallBuilder("Unique", 11).constant(data, DataType::float32()).outputs(4).call;
    checkCall(sorted, {},
              {HostTensor{{4}, {1, 2, 3, 4}}, HostTensor{{4}, {1, 0, 3, 4}}, HostTensor{{6}, {1, 0, 0, 2, 3, 2}},
               HostTensor{{4}, {2, 1, 2, 1}}});
    OpCall firstSeen = CallBuilder("Unique", 11).constant(data, DataType::float32()).attr("sorted", int64_t(0)).call;
    checkCall(firstSeen, {}, {HostTensor{{4}, {2, 1, 3, 4}}});
    // Along axis 1: columns [2, 3], [1, 4], [1, 3]; all distinct, sorted lexicographically.
    OpCall columns =
        CallBuilder("Unique", 11).constant(data, DataType::float32()).attr("axis", int64_t(-1)).outputs(2).call;
    checkCall(columns, {}, {HostTensor{{2, 3}, {1, 1, 2, 3, 4, 3}}, HostTensor{{3}, {2, 1, 0}}});
    QString error = diagnosticOf(CallBuilder("Unique", 11).input({4}).call);
    QVERIFY2(error.contains("Unique 'node_Unique'") && error.contains("data-dependent"), qPrintable(error));
  }

  void resizeInterpolates_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("coordinates");
    QTest::addColumn<QString>("nearest");
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<double>("scale");  // of both spatial axes; 0: sizes are given instead
    QTest::newRow("nearest half_pixel up") << "nearest"
                                           << "half_pixel"
                                           << "round_prefer_floor" << Shape{1, 1, 5, 7} << 0.0;
    QTest::newRow("nearest asymmetric ceil") << "nearest"
                                             << "asymmetric"
                                             << "ceil" << Shape{1, 1, 6, 3} << 0.0;
    QTest::newRow("nearest align_corners floor") << "nearest"
                                                 << "align_corners"
                                                 << "floor" << Shape{1, 1, 7, 8} << 0.0;
    QTest::newRow("nearest tf_half_pixel_for_nn") << "nearest"
                                                  << "tf_half_pixel_for_nn"
                                                  << "round_prefer_ceil" << Shape{1, 1, 2, 9} << 0.0;
    QTest::newRow("linear half_pixel") << "linear"
                                       << "half_pixel"
                                       << "" << Shape{1, 1, 7, 5} << 0.0;
    QTest::newRow("linear align_corners down") << "linear"
                                               << "align_corners"
                                               << "" << Shape{1, 1, 3, 2} << 0.0;
    QTest::newRow("linear pytorch_half_pixel") << "linear"
                                               << "pytorch_half_pixel"
                                               << "" << Shape{1, 1, 1, 8} << 0.0;
    QTest::newRow("cubic half_pixel") << "cubic"
                                      << "half_pixel"
                                      << "" << Shape{1, 1, 8, 6} << 0.0;
    QTest::newRow("cubic asymmetric down") << "cubic"
                                           << "asymmetric"
                                           << "" << Shape{1, 1, 2, 3} << 0.0;
    QTest::newRow("linear align_corners by scale") << "linear"
                                                   << "align_corners"
                                                   << "" << Shape{1, 1, 2, 3} << 0.6;
    QTest::newRow("cubic align_corners by scale") << "cubic"
                                                  << "align_corners"
                                                  << "" << Shape{1, 1, 2, 3} << 0.6;
    QTest::newRow("nearest pytorch_half_pixel by scale") << "nearest"
                                                         << "pytorch_half_pixel"
                                                         << "round_prefer_ceil" << Shape{1, 1, 6, 8} << 1.7;
  }
  void resizeInterpolates() {
    QFETCH(QString, mode);
    QFETCH(QString, coordinates);
    QFETCH(QString, nearest);
    QFETCH(Shape, sizes);
    QFETCH(double, scale);
    Shape shape{1, 1, 4, 5};
    HostTensor in = distinctTensor(shape);
    const double a = -0.75;
    // Per axis: each output index's input taps and weights, straight from the spec.
    // The resized length is input extent times scale, unfloored, as in the ONNX reference.
    auto taps = [&](int64_t inExtent, int64_t outExtent) {
      std::vector<std::vector<std::pair<int64_t, double>>> all;
      double axisScale = scale > 0 ? scale : double(outExtent) / double(inExtent);
      double length = double(inExtent) * axisScale;
      for (int64_t j = 0; j < outExtent; ++j) {
        double x;
        if (inExtent == outExtent && axisScale == 1) {
          all.push_back({{j, 1.0}});
          continue;
        }
        if (coordinates == "half_pixel")
          x = (j + 0.5) / axisScale - 0.5;
        else if (coordinates == "pytorch_half_pixel")
          x = length > 1 ? (j + 0.5) / axisScale - 0.5 : 0;
        else if (coordinates == "align_corners")
          x = length == 1 ? 0 : j * double(inExtent - 1) / (length - 1);
        else if (coordinates == "tf_half_pixel_for_nn")
          x = (j + 0.5) / axisScale;
        else
          x = j / axisScale;
        auto clampIn = [&](int64_t i) { return std::clamp<int64_t>(i, 0, inExtent - 1); };
        if (mode == "nearest") {
          double r = nearest == "floor"               ? std::floor(x)
                     : nearest == "ceil"              ? std::ceil(x)
                     : nearest == "round_prefer_ceil" ? std::floor(x + 0.5)
                     : x - std::floor(x) == 0.5       ? std::floor(x)
                                                      : std::round(x);
          all.push_back({{clampIn(int64_t(r)), 1.0}});
        } else if (mode == "linear") {
          double f = x - std::floor(x);
          int64_t base = int64_t(std::floor(x));
          all.push_back({{clampIn(base), 1 - f}, {clampIn(base + 1), f}});
        } else {
          double f = x - std::floor(x);
          int64_t base = int64_t(std::floor(x));
          auto kernel = [&](double d) {
            d = std::abs(d);
            if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
            if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
            return 0.0;
          };
          std::vector<std::pair<int64_t, double>> t;
          for (int64_t k = -1; k <= 2; ++k) t.push_back({clampIn(base + k), kernel(double(k) - f)});
          all.push_back(t);
        }
      }
      return all;
    };
    auto rows = taps(shape[2], sizes[2]), columns = taps(shape[3], sizes[3]);
    HostTensor want = makeTensor(sizes, [&](int64_t i) {
      Shape o = indexOf(sizes, i);
      double sum = 0;
      for (auto& [r, wr] : rows[size_t(o[2])])
        for (auto& [c, wc] : columns[size_t(o[3])]) sum += wr * wc * at(in, {0, 0, r, c});
      return sum;
    });
    CallBuilder call("Resize", 13);
    if (scale > 0) {
      QCOMPARE(sizes[2], int64_t(std::floor(shape[2] * scale)));  // the row's sizes are what the scale gives
      QCOMPARE(sizes[3], int64_t(std::floor(shape[3] * scale)));
      call.input(shape).omitted().constant(floatConstant({1, 1, float(scale), float(scale)}, {4}), DataType::float32());
    } else {
      call.input(shape).omitted().omitted().ints(sizes);
    }
    call.attr("mode", mode.toStdString());
    call.attr("coordinate_transformation_mode", coordinates.toStdString());
    if (!nearest.isEmpty()) call.attr("nearest_mode", nearest.toStdString());
    checkCall(call.call, {{0, in}}, {want}, 1e-5);
  }

  void resizeByScalesAndUpsample() {
    HostTensor in = distinctTensor({1, 2, 2, 3});
    HostTensor repeated = makeTensor({1, 2, 4, 9}, [&](int64_t i) {
      Shape o = indexOf({1, 2, 4, 9}, i);
      return at(in, {0, o[1], o[2] / 2, o[3] / 3});
    });
    auto scales = floatConstant({1, 1, 2, 3}, {4});
    checkCall(CallBuilder("Upsample", 9).input({1, 2, 2, 3}).constant(scales, DataType::float32()).call, {{0, in}},
              {repeated});
    checkCall(CallBuilder("Upsample", 7).input({1, 2, 2, 3}).attr("scales", std::vector<double>{1, 1, 2, 3}).call,
              {{0, in}}, {repeated});
    checkCall(CallBuilder("Resize", 10).input({1, 2, 2, 3}).constant(scales, DataType::float32()).call, {{0, in}},
              {repeated});
    checkCall(CallBuilder("Resize", 13)
                  .input({1, 2, 2, 3})
                  .omitted()
                  .constant(scales, DataType::float32())
                  .attr("coordinate_transformation_mode", std::string("asymmetric"))
                  .attr("nearest_mode", std::string("floor"))
                  .call,
              {{0, in}}, {repeated});
  }

  void emptyTensorsFlowThrough() {
    // ONNX models reshape, slice, split, concatenate and mask empty tensors.
    auto empty = [](const Shape& shape) { return HostTensor{shape, {}}; };
    checkCall(CallBuilder("Reshape", 14).input({0, 3, 4}).ints({3, 4, 0}).attr("allowzero", int64_t(1)).call,
              {{0, empty({0, 3, 4})}}, {empty({3, 4, 0})});
    checkCall(CallBuilder("Trilu").input({3, 0, 5}).call, {{0, empty({3, 0, 5})}}, {empty({3, 0, 5})});
    checkCall(CallBuilder("ConstantOfShape").ints({0}).call, {}, {empty({0})});
    checkCall(CallBuilder("Shape", 15).input({2, 3}).attr("start", int64_t(1)).attr("end", int64_t(1)).call, {},
              {empty({0})});
    checkCall(CallBuilder("Range")
                  .constant(intConstant({5}, {}), DataType::int64())
                  .constant(intConstant({2}, {}), DataType::int64())
                  .constant(intConstant({1}, {}), DataType::int64())
                  .call,
              {}, {empty({0})});
    checkCall(CallBuilder("Tile").input({2, 3}).ints({0, 2}).call, {{0, distinctTensor({2, 3})}}, {empty({0, 6})});
    HostTensor in = distinctTensor({4, 3});
    checkCall(CallBuilder("Slice", 13).input({4, 3}).ints({1000}).ints({1001}).ints({1}).call, {{0, in}},
              {empty({4, 0})});
    checkCall(CallBuilder("Split", 13).input({4, 3}).ints({0, 4, 0}).outputs(3).call, {{0, in}},
              {empty({0, 3}), in, empty({0, 3})});
    // The empty input of a Concat is not read: the kernel takes only the other one.
    OpCall join = CallBuilder("Concat").input({4, 0}).input({4, 3}).attr("axis", int64_t(1)).call;
    auto kernel = graph::buildOpKernel(join);
    QVERIFY(kernel.ok());
    QCOMPARE(kernel->inputIndices, std::vector<int>{1});
    checkCall(join, {{1, in}}, {in});
  }

  void gridSampleFollowsTheReference_data() {
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("padding");
    QTest::addColumn<bool>("alignCorners");
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* padding : {"zeros", "border", "reflection"})
        for (bool align : {false, true})
          QTest::newRow((std::string(mode) + " " + padding + (align ? " aligned" : "")).c_str())
              << mode << padding << align;
  }
  void gridSampleFollowsTheReference() {
    QFETCH(QString, mode);
    QFETCH(QString, padding);
    QFETCH(bool, alignCorners);
    Shape shape{1, 2, 3, 4}, gridShape{1, 5, 6, 2};
    HostTensor in = distinctTensor(shape);
    // Positions from well outside to well inside [-1, 1], none exactly halfway between pixels.
    HostTensor grid = makeTensor(gridShape, [](int64_t i) { return double((i * 37) % 29) / 8.3 - 1.7; });
    auto low = [&](int64_t) { return alignCorners ? 0.0 : -0.5; };
    auto high = [&](int64_t n) { return alignCorners ? double(n - 1) : n - 0.5; };
    auto reflect = [](double x, double lo, double hi) {
      double span = hi - lo;
      if (x < lo) {
        double d = lo - x, flips = std::floor(d / span), rest = d - flips * span;
        return int64_t(flips) % 2 == 0 ? lo + rest : hi - rest;
      }
      if (x > hi) {
        double d = x - hi, flips = std::floor(d / span), rest = d - flips * span;
        return int64_t(flips) % 2 == 0 ? hi - rest : lo + rest;
      }
      return x;
    };
    auto pixelAt = [&](int64_t n, int64_t c, int64_t r, int64_t k) {
      int64_t H = shape[2], W = shape[3];
      if (padding == "zeros") return r >= 0 && r < H && k >= 0 && k < W ? at(in, {n, c, r, k}) : 0.0;
      if (padding == "border")
        return at(in, {n, c, std::clamp<int64_t>(r, 0, H - 1), std::clamp<int64_t>(k, 0, W - 1)});
      r = int64_t(reflect(double(r), low(H), high(H)));
      k = int64_t(reflect(double(k), low(W), high(W)));
      return at(in, {n, c, std::clamp<int64_t>(r, 0, H - 1), std::clamp<int64_t>(k, 0, W - 1)});
    };
    auto cubic = [](double t) {
      const double a = -0.75;
      auto w = [a](double d) {
        d = std::abs(d);
        return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
      };
      return std::vector<double>{w(t + 1), w(t), w(1 - t), w(2 - t)};
    };
    Shape outShape{1, 2, 5, 6};
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape o = indexOf(outShape, i);
      int64_t H = shape[2], W = shape[3];
      auto denormalize = [&](double g, int64_t n) {
        return alignCorners ? (g + 1) / 2 * double(n - 1) : ((g + 1) * double(n) - 1) / 2;
      };
      double x = denormalize(at(grid, {o[0], o[2], o[3], 0}), W), y = denormalize(at(grid, {o[0], o[2], o[3], 1}), H);
      if (mode == "nearest") x = std::nearbyint(x), y = std::nearbyint(y);
      if (x < low(W) || x > high(W) || y < low(H) || y > high(H)) {
        if (padding == "border") x = std::clamp(x, 0.0, double(W - 1)), y = std::clamp(y, 0.0, double(H - 1));
        if (padding == "reflection") x = reflect(x, low(W), high(W)), y = reflect(y, low(H), high(H));
      }
      if (mode == "nearest") return pixelAt(o[0], o[1], int64_t(y), int64_t(x));
      int64_t x0 = int64_t(std::floor(x)), y0 = int64_t(std::floor(y));
      double dx = x - double(x0), dy = y - double(y0);
      if (mode == "bilinear")
        return (1 - dy) * ((1 - dx) * pixelAt(o[0], o[1], y0, x0) + dx * pixelAt(o[0], o[1], y0, x0 + 1)) +
               dy * ((1 - dx) * pixelAt(o[0], o[1], y0 + 1, x0) + dx * pixelAt(o[0], o[1], y0 + 1, x0 + 1));
      std::vector<double> wx = cubic(dx), wy = cubic(dy);
      double sum = 0;
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t c = 0; c < 4; ++c)
          sum += wy[size_t(r)] * wx[size_t(c)] * pixelAt(o[0], o[1], y0 + r - 1, x0 + c - 1);
      return sum;
    });
    checkCall(CallBuilder("GridSample", 16)
                  .input(shape)
                  .input(gridShape)
                  .attr("mode", mode.toStdString())
                  .attr("padding_mode", padding.toStdString())
                  .attr("align_corners", int64_t(alignCorners))
                  .call,
              {{0, in}, {1, grid}}, {want}, 1e-4);
  }

  void everyElementTypeMovesUnchanged_data() {
    QTest::addColumn<QString>("type");
    for (const char* type : {"bool", "int8", "uint8", "int32", "int64", "float64"}) QTest::newRow(type) << type;
  }
  void everyElementTypeMovesUnchanged() {
    QFETCH(QString, type);
    DataType dtype = *DataType::parse(type.toStdString());
    HostTensor in = makeTensor({3, 4}, [&](int64_t i) {
      int64_t v = (i * 7) % 11;
      return dtype.isBool() ? double(v % 2) : dtype.isUInt() ? double(v) : double(v - 5);
    });
    HostTensor transposed = makeTensor({4, 3}, [&](int64_t i) { return at(in, {i % 3, i / 3}); });
    checkCall(CallBuilder("Transpose").input({3, 4}, dtype).call, {{0, in}}, {transposed});
    checkCall(CallBuilder("Reshape").input({3, 4}, dtype).ints({2, 6}).call, {{0, in}}, {sameValues(in, {2, 6})});
    HostTensor edge = makeTensor({3, 6}, [&](int64_t i) {
      return at(in, {i / 6, std::clamp<int64_t>(i % 6 - 1, 0, 3)});
    });
    checkCall(CallBuilder("Pad", 13).input({3, 4}, dtype).ints({0, 1, 0, 1}).attr("mode", std::string("edge")).call,
              {{0, in}}, {edge});
    HostTensor tiled = makeTensor({3, 8}, [&](int64_t i) { return at(in, {i / 8, i % 4}); });
    checkCall(CallBuilder("Tile").input({3, 4}, dtype).ints({1, 2}).call, {{0, in}}, {tiled});
  }

  void badModelsGetDiagnosticsNamingNodeAndOp_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("reshape shape not constant") << 0 << "Reshape 'node_Reshape': shape (input 1) must be a constant";
    QTest::newRow("reshape element count") << 1 << "Reshape 'node_Reshape'";
    QTest::newRow("transpose perm") << 2 << "Transpose 'node_Transpose': perm is not a permutation";
    QTest::newRow("squeeze extent") << 3 << "Squeeze 'node_Squeeze': cannot squeeze axis 1";
    QTest::newRow("pad mode") << 4 << "Pad 'node_Pad': mode 'circular' is not supported";
    QTest::newRow("concat axis") << 5 << "Concat 'node_Concat': attribute 'axis' is missing";
    QTest::newRow("gather indices type") << 6 << "Gather 'node_Gather': indices of type float32";
    QTest::newRow("resize mode") << 7 << "Resize 'node_Resize': mode 'area' is not supported";
    QTest::newRow("depth to space blocks") << 8 << "DepthToSpace 'node_DepthToSpace': blocksize 3";
    QTest::newRow("split sizes") << 9 << "Split 'node_Split': split sizes add up to 5";
    QTest::newRow("attribute kind") << 10 << "Flatten 'node_Flatten': attribute 'axis' is string";
    QTest::newRow("constant of shape type")
        << 11 << "ConstantOfShape 'node_ConstantOfShape': value has element type 'string'";
    QTest::newRow("scatter updates") << 12
                                     << "ScatterElements 'node_ScatterElements': updates have shape 2x2, expected 2x3";
  }
  void badModelsGetDiagnosticsNamingNodeAndOp() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    std::vector<OpCall> calls = {
        CallBuilder("Reshape").input({2, 3}).input({2}, DataType::int64()).call,
        CallBuilder("Reshape").input({2, 3}).ints({4, 2}).call,
        CallBuilder("Transpose").input({2, 3}).attr("perm", Shape{0, 0}).call,
        CallBuilder("Squeeze", 13).input({2, 3}).ints({1}).call,
        CallBuilder("Pad", 13).input({2, 3}).ints({0, 1, 0, 1}).attr("mode", std::string("circular")).call,
        CallBuilder("Concat").input({2, 3}).input({2, 3}).call,
        CallBuilder("Gather").input({2, 3}).input({2}).call,
        CallBuilder("Resize", 13)
            .input({1, 1, 2, 2})
            .omitted()
            .omitted()
            .ints({1, 1, 4, 4})
            .attr("mode", std::string("area"))
            .call,
        CallBuilder("DepthToSpace").input({1, 8, 2, 2}).attr("blocksize", int64_t(3)).call,
        CallBuilder("Split", 13).input({6, 2}).ints({2, 3}).outputs(2).call,
        CallBuilder("Flatten").input({6, 2}).attr("axis", std::string("one")).call,
        CallBuilder("ConstantOfShape")
            .ints({2})
            .attr("value", std::vector<double>{1})
            .attr("value.dtype", std::string("string"))
            .call,
        CallBuilder("ScatterElements").input({3, 3}).input({2, 3}, DataType::int64()).input({2, 2}).call,
    };
    QString error = diagnosticOf(calls[size_t(which)]);
    QVERIFY2(error.contains(expected), qPrintable(error));
    // The kernel refuses the same call with the same message (the compiler never crashes).
    auto kernel = graph::buildOpKernel(calls[size_t(which)]);
    QVERIFY(!kernel.ok());
  }
};

QTEST_GUILESS_MAIN(TestOpdefsShape)
#include "test_opdefs_shape.moc"
