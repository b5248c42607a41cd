// Data-movement operators (Transpose, Reshape, Concat, Slice, Gather, Split, Where, Expand,
// Pad, Cast) under their default schedule against C++ references written from the ONNX spec.
#include <QtTest>

#include "OpsTestSupport.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Transform.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)
Q_DECLARE_METATYPE(std::vector<std::vector<int64_t>>)

namespace {
using Shape = std::vector<int64_t>;

// Runs `w` under its default schedule on a target with 2 threads and 8 lanes (so parallel
// and vector paths are both taken on any host) and on the host target; both must agree
// with `expected`.
void checkWorkload(const Expected<Workload>& w, const std::vector<HostTensor>& inputs,
                   const std::vector<HostTensor>& expected, double tolerance = 0) {
  QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
  Target small;
  small.vectorBits = 32 * 8;
  small.cores = 2;
  for (const Target& target : {small, hostTarget()}) {
    auto schedule = defaultTransformSchedule(*w, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto got = runWorkload(*w, *schedule, inputs);
    QCOMPARE(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      std::string problem = compareTensors(got[k], expected[k], tolerance);
      QVERIFY2(problem.empty(), ("output " + std::to_string(k) + ": " + problem).c_str());
    }
  }
}

// The broadcast read of `t` at output index `index` (NumPy rules).
double broadcastAt(const HostTensor& t, const Shape& index) {
  Shape at;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    size_t outDim = d + index.size() - t.shape.size();
    at.push_back(t.shape[d] == 1 ? 0 : index[outDim]);
  }
  return t.values[size_t(offsetOf(t.shape, at))];
}

QString errorOf(const Expected<Workload>& w) { return w.ok() ? QString() : QString::fromStdString(w.error().toString()); }
}  // namespace

class TestOpsTransform : public QObject {
  Q_OBJECT
private slots:
  void transposeMatchesReference_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("perm");
    QTest::newRow("2-D") << Shape{37, 21} << Shape{1, 0};
    QTest::newRow("default reverses") << Shape{3, 4, 5} << Shape{};
    QTest::newRow("NCHW to NHWC") << Shape{2, 24, 7, 9} << Shape{0, 2, 3, 1};
    QTest::newRow("keeps last axis") << Shape{4, 6, 40} << Shape{1, 0, 2};
    QTest::newRow("negative axes") << Shape{5, 3, 2} << Shape{-1, 0, 1};
    QTest::newRow("large, parallel") << Shape{64, 48, 24} << Shape{1, 0, 2};
  }
  void transposeMatchesReference() {
    QFETCH(Shape, shape);
    QFETCH(Shape, perm);
    HostTensor in = distinctTensor(shape);
    Shape p = perm;
    if (p.empty())
      for (size_t d = shape.size(); d-- > 0;) p.push_back(int64_t(d));
    for (int64_t& a : p)
      if (a < 0) a += int64_t(shape.size());
    Shape outShape;
    for (int64_t a : p) outShape.push_back(shape[size_t(a)]);
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape out = indexOf(outShape, i), at(shape.size());
      for (size_t d = 0; d < p.size(); ++d) at[size_t(p[d])] = out[d];
      return in.values[size_t(offsetOf(shape, at))];
    });
    checkWorkload(transpose(shape, perm), {in}, {want});
  }

  void reshapeKeepsRowMajorOrder_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("target");
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("flatten") << Shape{2, 8, 3, 3} << Shape{2, -1} << Shape{2, 72};
    QTest::newRow("zero copies") << Shape{4, 6, 10} << Shape{0, 3, 20} << Shape{4, 3, 20};
    QTest::newRow("split heads") << Shape{5, 64} << Shape{5, 4, 16} << Shape{5, 4, 16};
    QTest::newRow("to 1-D") << Shape{3, 7, 11} << Shape{-1} << Shape{231};
    QTest::newRow("to scalar") << Shape{1, 1} << Shape{} << Shape{};
    QTest::newRow("same trailing") << Shape{6, 4, 33} << Shape{2, 3, 4, 33} << Shape{2, 3, 4, 33};
    QTest::newRow("ones in and out") << Shape{1, 3, 1, 20} << Shape{3, 1, 4, 5, 1} << Shape{3, 1, 4, 5, 1};
    QTest::newRow("merge then split") << Shape{4, 6, 10} << Shape{8, 3, 2, 5} << Shape{8, 3, 2, 5};
  }
  void reshapeKeepsRowMajorOrder() {
    QFETCH(Shape, shape);
    QFETCH(Shape, target);
    QFETCH(Shape, expectedShape);
    HostTensor in = distinctTensor(shape);
    checkWorkload(reshape(shape, target), {in}, {HostTensor{expectedShape, in.values}});
  }

  void concatJoinsInputs_data() {
    QTest::addColumn<std::vector<Shape>>("shapes");
    QTest::addColumn<int>("axis");
    QTest::newRow("channels") << std::vector<Shape>{{1, 16, 5, 5}, {1, 8, 5, 5}} << 1;
    QTest::newRow("three, last axis") << std::vector<Shape>{{3, 4}, {3, 1}, {3, 17}} << -1;
    QTest::newRow("first axis") << std::vector<Shape>{{2, 9}, {5, 9}} << 0;
    QTest::newRow("one input") << std::vector<Shape>{{7, 3}} << 1;
    QTest::newRow("four, odd channel counts") << std::vector<Shape>{{1, 3, 5, 5}, {1, 8, 5, 5}, {1, 1, 5, 5}, {1, 20, 5, 5}}
                                              << 1;
    // Enough elements for parallel rows: each input's rows are a branch of one parallel loop.
    QTest::newRow("channels, parallel") << std::vector<Shape>{{1, 40, 30, 30}, {1, 24, 30, 30}, {1, 7, 30, 30}} << 1;
  }
  void concatJoinsInputs() {
    QFETCH(std::vector<Shape>, shapes);
    QFETCH(int, axis);
    size_t a = size_t(axis < 0 ? axis + int(shapes[0].size()) : axis);
    std::vector<HostTensor> inputs;
    Shape outShape = shapes[0];
    outShape[a] = 0;
    for (size_t k = 0; k < shapes.size(); ++k) {
      inputs.push_back(distinctTensor(shapes[k], int(k) + 1));
      outShape[a] += shapes[k][a];
    }
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape at = indexOf(outShape, i);
      size_t k = 0;
      while (at[a] >= shapes[k][a]) at[a] -= shapes[k++][a];
      return inputs[k].values[size_t(offsetOf(shapes[k], at))];
    });
    checkWorkload(concat(shapes, axis), inputs, {want});
  }

  void sliceFollowsOnnx_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("starts");
    QTest::addColumn<Shape>("ends");
    QTest::addColumn<Shape>("axes");
    QTest::addColumn<Shape>("steps");
    const int64_t big = std::numeric_limits<int64_t>::max();
    QTest::newRow("simple") << Shape{10, 20} << Shape{1, 2} << Shape{5, 18} << Shape{} << Shape{};
    QTest::newRow("negative bounds, one axis") << Shape{6, 30} << Shape{-25} << Shape{-3} << Shape{1} << Shape{};
    QTest::newRow("clamped end") << Shape{4, 9} << Shape{2} << Shape{big} << Shape{-1} << Shape{};
    QTest::newRow("stride 3") << Shape{3, 40} << Shape{1} << Shape{40} << Shape{1} << Shape{3};
    QTest::newRow("reverse whole axis") << Shape{5, 7} << Shape{-1} << Shape{-big} << Shape{1} << Shape{-1};
    QTest::newRow("reverse by 2, clamped start") << Shape{12, 3} << Shape{100} << Shape{1} << Shape{0} << Shape{-2};
    QTest::newRow("several axes") << Shape{4, 5, 6} << Shape{1, 4, 0} << Shape{3, 0, 6} << Shape{0, 1, 2}
                                  << Shape{1, -1, 2};
  }
  void sliceFollowsOnnx() {
    QFETCH(Shape, shape);
    QFETCH(Shape, starts);
    QFETCH(Shape, ends);
    QFETCH(Shape, axes);
    QFETCH(Shape, steps);
    // Reference: walk each axis with the ONNX formulas, element by element.
    Shape outShape = shape;
    std::vector<Shape> picks(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      for (int64_t i = 0; i < shape[d]; ++i) picks[d].push_back(i);
    for (size_t k = 0; k < starts.size(); ++k) {
      int64_t axis = axes.empty() ? int64_t(k) : axes[k];
      if (axis < 0) axis += int64_t(shape.size());
      int64_t dim = shape[size_t(axis)], step = steps.empty() ? 1 : steps[k];
      auto resolve = [dim](int64_t v) { return v < 0 ? (v < -dim ? -1 : v + dim) : v; };
      int64_t s = resolve(starts[k]), e = resolve(ends[k]);
      s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      e = step > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
      picks[size_t(axis)].clear();
      for (int64_t i = s; step > 0 ? i < e : i > e; i += step) picks[size_t(axis)].push_back(i);
      outShape[size_t(axis)] = int64_t(picks[size_t(axis)].size());
    }
    HostTensor in = distinctTensor(shape);
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape at = indexOf(outShape, i);
      for (size_t d = 0; d < at.size(); ++d) at[d] = picks[d][size_t(at[d])];
      return in.values[size_t(offsetOf(shape, at))];
    });
    checkWorkload(slice(shape, starts, ends, axes, steps), {in}, {want});
  }

  void gatherReadsIndexedRows_data() {
    QTest::addColumn<Shape>("dataShape");
    QTest::addColumn<Shape>("indicesShape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("int32Indices");
    QTest::newRow("embedding, int64") << Shape{50, 24} << Shape{2, 7} << 0 << false;
    QTest::newRow("embedding, int32") << Shape{50, 24} << Shape{9} << 0 << true;
    QTest::newRow("middle axis") << Shape{3, 10, 5} << Shape{4} << 1 << false;
    QTest::newRow("last axis, negative") << Shape{6, 11} << Shape{3, 2} << -1 << true;
    QTest::newRow("scalar index") << Shape{8, 33} << Shape{} << 0 << false;
    QTest::newRow("scalar result") << Shape{9} << Shape{} << 0 << true;
  }
  void gatherReadsIndexedRows() {
    QFETCH(Shape, dataShape);
    QFETCH(Shape, indicesShape);
    QFETCH(int, axis);
    QFETCH(bool, int32Indices);
    size_t a = size_t(axis < 0 ? axis + int(dataShape.size()) : axis);
    int64_t dim = dataShape[a];
    HostTensor data = distinctTensor(dataShape);
    // Indices cover negatives (from the end) and, past the last two, out-of-range values
    // that the operator clamps.
    HostTensor indices = makeTensor(indicesShape, [dim](int64_t i) {
      static const int64_t pattern[] = {0, 3, -1, 1, -2, 2};
      return double(i == 5 ? dim + 7 : i == 6 ? -dim - 4 : pattern[i % 6] % dim);
    });
    Shape outShape(dataShape.begin(), dataShape.begin() + long(a));
    outShape.insert(outShape.end(), indicesShape.begin(), indicesShape.end());
    outShape.insert(outShape.end(), dataShape.begin() + long(a) + 1, dataShape.end());
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape out = indexOf(outShape, i);
      Shape at(out.begin(), out.begin() + long(a));
      Shape which(out.begin() + long(a), out.begin() + long(a + indicesShape.size()));
      int64_t index = int64_t(indices.values[size_t(offsetOf(indicesShape, which))]);
      if (index < 0) index += dim;
      at.push_back(std::clamp<int64_t>(index, 0, dim - 1));
      at.insert(at.end(), out.begin() + long(a + indicesShape.size()), out.end());
      return data.values[size_t(offsetOf(dataShape, at))];
    });
    checkWorkload(gather(dataShape, indicesShape, axis, DataType::float32(),
                         int32Indices ? DataType::int32() : DataType::int64()),
                  {data, indices}, {want});
  }

  void splitCutsConsecutivePieces_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<Shape>("sizes");
    QTest::addColumn<int>("parts");
    QTest::newRow("sizes") << Shape{4, 30} << 1 << Shape{10, 3, 17} << 0;
    QTest::newRow("equal parts") << Shape{9, 5} << 0 << Shape{} << 3;
    QTest::newRow("uneven parts") << Shape{2, 10, 3} << -2 << Shape{} << 3;
  }
  void splitCutsConsecutivePieces() {
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(Shape, sizes);
    QFETCH(int, parts);
    size_t a = size_t(axis < 0 ? axis + int(shape.size()) : axis);
    Shape pieces = sizes;
    if (pieces.empty()) {
      int64_t piece = (shape[a] + parts - 1) / parts;
      for (int64_t taken = 0; taken < shape[a]; taken += piece) pieces.push_back(std::min(piece, shape[a] - taken));
    }
    HostTensor in = distinctTensor(shape);
    std::vector<HostTensor> want;
    int64_t offset = 0;
    for (int64_t size : pieces) {
      Shape outShape = shape;
      outShape[a] = size;
      want.push_back(makeTensor(outShape, [&](int64_t i) {
        Shape at = indexOf(outShape, i);
        at[a] += offset;
        return in.values[size_t(offsetOf(shape, at))];
      }));
      offset += size;
    }
    checkWorkload(split(shape, axis, sizes, DataType::float32(), parts), {in}, want);
  }

  void whereBroadcastsAllThree_data() {
    QTest::addColumn<Shape>("conditionShape");
    QTest::addColumn<Shape>("xShape");
    QTest::addColumn<Shape>("yShape");
    QTest::newRow("same") << Shape{5, 19} << Shape{5, 19} << Shape{5, 19};
    QTest::newRow("mask row") << Shape{1, 1, 40} << Shape{2, 3, 40} << Shape{1};
    QTest::newRow("all stretch") << Shape{4, 1} << Shape{1, 9} << Shape{4, 9};
  }
  void whereBroadcastsAllThree() {
    QFETCH(Shape, conditionShape);
    QFETCH(Shape, xShape);
    QFETCH(Shape, yShape);
    HostTensor condition = makeTensor(conditionShape, [](int64_t i) { return double((i * 7) % 3 == 0); });
    HostTensor x = distinctTensor(xShape, 1), y = distinctTensor(yShape, 2);
    size_t rank = std::max({conditionShape.size(), xShape.size(), yShape.size()});
    Shape outShape(rank, 1);
    for (auto* s : {&conditionShape, &xShape, &yShape})
      for (size_t d = 0; d < s->size(); ++d) outShape[d + rank - s->size()] = std::max(outShape[d + rank - s->size()], (*s)[d]);
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape at = indexOf(outShape, i);
      return broadcastAt(condition, at) != 0 ? broadcastAt(x, at) : broadcastAt(y, at);
    });
    checkWorkload(where(conditionShape, xShape, yShape), {condition, x, y}, {want});
  }

  void expandBroadcastsBothWays_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("target");
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("row to matrix") << Shape{33} << Shape{6, 33} << Shape{6, 33};
    QTest::newRow("target 1 keeps input") << Shape{3, 1} << Shape{2, 1, 6} << Shape{2, 3, 6};
    QTest::newRow("mask") << Shape{1, 1, 1, 20} << Shape{2, 4, 20, 20} << Shape{2, 4, 20, 20};
  }
  void expandBroadcastsBothWays() {
    QFETCH(Shape, shape);
    QFETCH(Shape, target);
    QFETCH(Shape, expectedShape);
    HostTensor in = distinctTensor(shape);
    HostTensor want = makeTensor(expectedShape, [&](int64_t i) { return broadcastAt(in, indexOf(expectedShape, i)); });
    checkWorkload(expand(shape, target), {in}, {want});
  }

  void padFillsConstant_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<double>("value");
    QTest::newRow("spatial") << Shape{1, 3, 6, 7} << Shape{0, 0, 1, 2, 0, 0, 3, 1} << 0.0;
    QTest::newRow("last axis only, value") << Shape{5, 21} << Shape{0, 4, 0, 0} << -2.5;
    QTest::newRow("negative crops") << Shape{6, 9} << Shape{-1, 2, 3, -4} << 1.0;
  }
  void padFillsConstant() {
    QFETCH(Shape, shape);
    QFETCH(Shape, pads);
    QFETCH(double, value);
    size_t rank = shape.size();
    Shape outShape(rank);
    for (size_t d = 0; d < rank; ++d) outShape[d] = shape[d] + pads[d] + pads[d + rank];
    HostTensor in = distinctTensor(shape);
    HostTensor want = makeTensor(outShape, [&](int64_t i) {
      Shape at = indexOf(outShape, i);
      for (size_t d = 0; d < rank; ++d) {
        at[d] -= pads[d];
        if (at[d] < 0 || at[d] >= shape[d]) return value;
      }
      return in.values[size_t(offsetOf(shape, at))];
    });
    checkWorkload(pad(shape, pads, value), {in}, {want});
  }

  void castConvertsElements_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::newRow("float32 to int32") << "float32" << "int32";
    QTest::newRow("int64 to float32") << "int64" << "float32";
    QTest::newRow("float32 to bool") << "float32" << "bool";
    QTest::newRow("int32 to int8") << "int32" << "int8";
    QTest::newRow("float32 to float64") << "float32" << "float64";
  }
  void castConvertsElements() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    DataType source = *DataType::parse(from.toStdString()), target = *DataType::parse(to.toStdString());
    Shape shape{3, 45};
    // Values that fit every target type; fractions where the source is a float.
    HostTensor in = makeTensor(shape, [&](int64_t i) {
      double v = double(i % 50) - 25;
      return source.isFloat() ? v * 1.25 : v;
    });
    HostTensor want = makeTensor(shape, [&](int64_t i) {
      double v = in.values[size_t(i)];
      if (target.isBool()) return double(v != 0);
      if (target.isIntegral()) return std::trunc(v);
      return v;
    });
    checkWorkload(castTensor(shape, source, target), {in}, {want});
  }

  void copiesKeepEveryElementType_data() {
    QTest::addColumn<QString>("type");
    for (const char* type : {"int8", "uint8", "int32", "int64", "float64", "bool"}) QTest::newRow(type) << type;
  }
  void copiesKeepEveryElementType() {
    // Vector widths depend on the element size (int8: four times float32's lanes).
    QFETCH(QString, type);
    DataType dtype = *DataType::parse(type.toStdString());
    auto values = [&](const Shape& shape, int seed) {
      return makeTensor(shape, [&, seed](int64_t i) {
        int64_t v = (i * 37 + seed) % 101;
        return dtype.isBool() ? double(v % 2) : dtype.isUInt() ? double(v) : double(v - 50);
      });
    };
    Shape shape{3, 70};
    HostTensor a = values(shape, 1), b = values(shape, 2);
    // Concat along the last axis, then transpose and pad of the first input.
    HostTensor joined = makeTensor({3, 140}, [&](int64_t i) {
      int64_t row = i / 140, column = i % 140;
      return column < 70 ? a.values[size_t(row * 70 + column)] : b.values[size_t(row * 70 + column - 70)];
    });
    checkWorkload(concat({shape, shape}, 1, dtype), {a, b}, {joined});
    HostTensor transposed = makeTensor({70, 3}, [&](int64_t i) { return a.values[size_t((i % 3) * 70 + i / 3)]; });
    checkWorkload(transpose(shape, {1, 0}, dtype), {a}, {transposed});
    HostTensor padded = makeTensor({3, 73}, [&](int64_t i) {
      int64_t column = i % 73 - 1;
      return column < 0 || column >= 70 ? 1.0 : a.values[size_t((i / 73) * 70 + column)];
    });
    checkWorkload(pad(shape, {0, 1, 0, 2}, 1.0, dtype), {a}, {padded});
  }

  void copiesVectorizeAndParallelize() {
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 4;
    auto w = transpose({64, 32, 64}, {1, 0, 2});
    QVERIFY(w.ok());
    auto schedule = defaultTransformSchedule(*w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(*w, *schedule);
    QVERIFY2(text.contains("parallel for") && text.contains("ramp("), qPrintable(text));
  }

  void reshapeOfTrailingAxisVectorizes() {
    // [S, 768] -> [S, 12, 64] (attention heads): the copy stays contiguous along 64.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 1;
    auto w = reshape({5, 768}, {5, 12, 64});
    QVERIFY(w.ok());
    auto schedule = defaultTransformSchedule(*w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(*w, *schedule);
    QVERIFY2(text.contains("ramp("), qPrintable(text));
  }

  void stridedReadsStayScalar() {
    // A transpose of the innermost axis reads with a stride: vector lanes would gather.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 1;
    auto w = transpose({16, 16}, {1, 0});
    QVERIFY(w.ok());
    auto schedule = defaultTransformSchedule(*w, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QVERIFY(!QString::fromStdString(toString(lowered->func)).contains("ramp("));
  }

  void emptyTensorsGiveEmptyResults() {
    // ONNX models slice, split, reshape and concatenate empty tensors; the loops never run.
    auto outputShape = [](const Expected<Workload>& w, size_t k = 0) {
      return w.ok() ? constShape(w->outputs[k]) : Shape{-1};
    };
    QCOMPARE(outputShape(slice({5, 4}, {3}, {1})), (Shape{0, 4}));
    QCOMPARE(outputShape(slice({0, 4}, {-1}, {-10}, {0}, {-1})), (Shape{0, 4}));
    QCOMPARE(outputShape(split({4, 3}, 0, {4, 0}), 1), (Shape{0, 3}));
    QCOMPARE(outputShape(reshape({0, 3}, {3, 0}, DataType::float32(), true)), (Shape{3, 0}));
    QCOMPARE(outputShape(concat({{2, 0}, {2, 3}}, 1)), (Shape{2, 3}));
    HostTensor right = distinctTensor({2, 3});
    auto joined = concat({{2, 0}, {2, 3}}, 1);
    QCOMPARE(joined.ok() ? joined->inputs.size() : 0, size_t(1));  // the empty input has nothing to read
    checkWorkload(joined, {right}, {right});
    checkWorkload(slice({5, 4}, {3}, {1}), {distinctTensor({5, 4})}, {HostTensor{{0, 4}, {}}});
  }

  void invalidAttributesAreDiagnosed_data() {
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("expected");
    QTest::newRow("transpose perm repeats") << errorOf(transpose({2, 3}, {0, 0})) << "not a permutation";
    QTest::newRow("transpose perm length") << errorOf(transpose({2, 3}, {0})) << "perm has 1 entries";
    QTest::newRow("reshape two -1") << errorOf(reshape({4, 6}, {-1, -1})) << "more than one -1";
    QTest::newRow("reshape count") << errorOf(reshape({4, 6}, {5, 5})) << "holds 25 elements";
    QTest::newRow("reshape infer") << errorOf(reshape({4, 6}, {5, -1})) << "cannot infer";
    QTest::newRow("concat mismatch") << errorOf(concat({{2, 3}, {2, 4}}, 0)) << "must match";
    QTest::newRow("concat axis") << errorOf(concat({{2, 3}}, 2)) << "outside the rank";
    QTest::newRow("slice step 0") << errorOf(slice({5}, {0}, {5}, {}, {0})) << "step 0";
    QTest::newRow("slice repeated axis") << errorOf(slice({5, 5}, {0, 1}, {2, 3}, {1, -1})) << "listed twice";
    QTest::newRow("gather index type") << errorOf(gather({5}, {2}, 0, DataType::float32(), DataType::float32()))
                                       << "int32 or int64";
    QTest::newRow("gather axis") << errorOf(gather({5}, {2}, 1)) << "outside the rank";
    QTest::newRow("split sizes") << errorOf(split({6, 2}, 0, {2, 3})) << "add up to 5";
    QTest::newRow("split parts") << errorOf(split({2}, 0, {}, DataType::float32(), 3)) << "non-empty parts";
    QTest::newRow("where shapes") << errorOf(where({3}, {4}, {1})) << "do not broadcast";
    QTest::newRow("expand shapes") << errorOf(expand({3, 2}, {3, 4})) << "do not broadcast";
    QTest::newRow("pad count") << errorOf(pad({3, 2}, {1, 1})) << "pads has 2 entries";
    QTest::newRow("pad crops all") << errorOf(pad({3}, {-2, -1})) << "leaves axis 0 with 0";
    QTest::newRow("zero dimension") << errorOf(castTensor({3, 0}, DataType::float32(), DataType::int32()))
                                    << "dimension below 1";
  }
  void invalidAttributesAreDiagnosed() {
    QFETCH(QString, message);
    QFETCH(QString, expected);
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void blockedConcatCopiesWholeRowsOfBlocks() {
    // A channel Concat of NCHW16c tensors ([N, C / 16, H, W, 16]): the innermost axis is two
    // vectors. Fused into the parallel rows, the width's index was divided out of the row
    // number for every two vectors (a blocked Concat ran 3x slower than the NCHW one); kept
    // as a loop inside each row, each input's rows copy at a plain index, and the rows are
    // split at the inputs' boundaries.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 2;
    Shape a = {1, 4, 35, 35, 16}, b = {1, 2, 35, 35, 16};
    auto w = concat({a, b}, 1);
    QVERIFY(w.ok());
    auto schedule = defaultTransformSchedule(*w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(*w, *schedule);
    QVERIFY2(text.contains("parallel for (rows, 0, 210)") && text.contains("if (rows < 140)") &&
                 text.contains("for (ax3, 0, 35)") && text.contains("out[ramp(rows*560 + ax3*16 + vo*8, 1, 8)]") &&
                 !text.contains("//"),
             qPrintable(text));
    HostTensor first = distinctTensor(a), second = distinctTensor(b);
    HostTensor joined{{1, 6, 35, 35, 16}, first.values};
    joined.values.insert(joined.values.end(), second.values.begin(), second.values.end());
    checkWorkload(w, {first, second}, {joined});
  }
};

QTEST_GUILESS_MAIN(TestOpsTransform)
#include "test_ops_transform.moc"
