// The compute-heavy ONNX operators under their default schedules: Conv (grouped, depthwise,
// dilated, strided per axis, asymmetrically padded, with bias) against a direct C++ loop,
// and Gemm (transposes, alpha, beta, broadcast C) against a plain triple loop; the same
// convolutions and matrix products with weights packed at compile time (what AlterLayout does),
// and 3x3 convolutions by Winograd's F(m x m, 3 x 3) in every layout and dilation it takes.
#include <QtTest>

#include "OpsTestSupport.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Gemm.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/WinogradConv2d.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {
using Shape = std::vector<int64_t>;

// Values in [-1, 1) from a fixed pattern, so sums of products have no exact ties to hide.
HostTensor smallValues(const Shape& shape, int seed) {
  return makeTensor(shape, [seed](int64_t i) { return double(((i + seed) * 7919 + seed * 104729) % 2001) / 1000.0 - 1.0; });
}

// A sum of products matches within float32 rounding of its terms' magnitudes (times `slack`
// for algorithms that round more, such as Winograd's transforms).
std::string compareSums(const HostTensor& got, const HostTensor& value, const HostTensor& magnitude, int64_t terms,
                        double slack = 1) {
  if (got.shape != value.shape) return "shapes differ";
  double epsilon = 4e-7 * double(terms + 4) * slack;
  for (size_t i = 0; i < got.values.size(); ++i)
    if (!(std::abs(got.values[i] - value.values[i]) <= epsilon * (magnitude.values[i] + 1e-3)))
      return "element " + std::to_string(i) + ": got " + std::to_string(got.values[i]) + ", expected " +
             std::to_string(value.values[i]);
  return "";
}

Target targetWithLanes(int lanes) {
  Target target = hostTarget();
  if (lanes) target.vectorBits = 32 * lanes;
  target.cores = std::max(2, target.cores);
  return target;
}

// The ONNX Conv definition, one output element at a time.
void convReference(const Conv2dParams& p, const HostTensor& data, const HostTensor& weight, const HostTensor* bias,
                   HostTensor& value, HostTensor& magnitude) {
  int64_t oh = p.outHeight(), ow = p.outWidth(), cpg = p.channels / p.groups, fpg = p.filters / p.groups;
  Shape outShape{p.batch, p.filters, oh, ow};
  value = makeTensor(outShape, [](int64_t) { return 0.0; });
  magnitude = value;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t k = 0; k < p.filters; ++k)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double sum = bias ? bias->values[size_t(k)] : 0.0, size = std::abs(sum);
          for (int64_t c = 0; c < cpg; ++c)
            for (int64_t r = 0; r < p.kernelH; ++r)
              for (int64_t s = 0; s < p.kernelW; ++s) {
                int64_t iy = y * p.strideAlongHeight() + r * p.dilationH - p.paddingTop();
                int64_t ix = x * p.strideAlongWidth() + s * p.dilationW - p.paddingLeft();
                if (iy < 0 || iy >= p.height || ix < 0 || ix >= p.width) continue;
                int64_t channel = (k / fpg) * cpg + c;
                double term = data.values[size_t(offsetOf(data.shape, {n, channel, iy, ix}))] *
                              weight.values[size_t(offsetOf(weight.shape, {k, c, r, s}))];
                sum += term;
                size += std::abs(term);
              }
          size_t at = size_t(offsetOf(outShape, {n, k, y, x}));
          value.values[at] = sum;
          magnitude.values[at] = size;
        }
}

QString errorOf(const Expected<Workload>& w) { return w.ok() ? QString() : QString::fromStdString(w.error().toString()); }

// A host tensor as a float32 NDArray and back (the compile-time packing works on NDArrays).
runtime::NDArray toArray(const HostTensor& t) {
  auto array = runtime::NDArray::empty(t.shape, runtime::DataType::float32());
  for (size_t i = 0; i < t.values.size(); ++i) array.dataAs<float>()[i] = float(t.values[i]);
  return array;
}
HostTensor fromArray(const runtime::NDArray& array) {
  HostTensor t{array.shape(), {}};
  for (float v : array.values<float>()) t.values.push_back(v);
  return t;
}

Conv2dParams convParams(Shape input, int64_t filters, int64_t kernelH, int64_t kernelW) {
  Conv2dParams p;
  p.batch = input[0];
  p.channels = input[1];
  p.height = input[2];
  p.width = input[3];
  p.filters = filters;
  p.kernelH = kernelH;
  p.kernelW = kernelW;
  return p;
}

/// The default schedule of a convolution with a packed weight, lowered, as text.
QString defaultLowering(const Conv2dParams& p) {
  Workload w = conv2d(p, Conv2dWeightLayout::Packed);
  auto schedule = defaultConv2dSchedule(w, p);
  if (!schedule.ok()) return QString::fromStdString("no schedule: " + schedule.error().toString());
  return loweredText(w, *schedule);
}

// Strides {h, w}, pads {top, left, bottom, right} and dilations {h, w}, as the tests' rows give them.
void setGeometry(Conv2dParams& p, const Shape& strides, const Shape& pads, const Shape& dilations) {
  p.strideH = strides[0];
  p.strideW = strides[1];
  p.padTop = pads[0];
  p.padLeft = pads[1];
  p.padBottom = pads[2];
  p.padRight = pads[3];
  p.dilationH = dilations[0];
  p.dilationW = dilations[1];
}
}  // namespace

class TestOpsConv : public QObject {
  Q_OBJECT
private slots:
  void convMatchesDirectLoop_data() {
    QTest::addColumn<Shape>("input");       // N, C, H, W
    QTest::addColumn<Shape>("kernel");      // filters, R, S
    QTest::addColumn<Shape>("strides");     // along H, W
    QTest::addColumn<Shape>("pads");        // top, left, bottom, right
    QTest::addColumn<Shape>("dilations");   // along H, W
    QTest::addColumn<int>("groups");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<int>("lanes");  // 0: the host's
    for (int lanes : {0, 8}) {
      std::string on = lanes ? ", 8 lanes" : ", host";
      auto row = [&](const std::string& name) -> QTestData& { return QTest::newRow((name + on).c_str()); };
      row("depthwise 3x3 pad 1") << Shape{1, 32, 14, 14} << Shape{32, 3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                                 << Shape{1, 1} << 32 << false << lanes;
      row("depthwise stride 2, bias") << Shape{1, 24, 15, 15} << Shape{24, 3, 3} << Shape{2, 2} << Shape{0, 0, 1, 1}
                                      << Shape{1, 1} << 24 << true << lanes;
      row("depthwise stride 1x3, dilated, asymmetric pads") << Shape{1, 5, 13, 29} << Shape{5, 3, 3} << Shape{1, 3}
                                                           << Shape{2, 0, 1, 3} << Shape{1, 2} << 5 << true << lanes;
      row("depthwise narrow rows") << Shape{2, 8, 7, 7} << Shape{8, 3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                                   << Shape{1, 1} << 8 << true << lanes;
      row("depthwise multiplier 2, dilated") << Shape{1, 6, 20, 37} << Shape{12, 3, 3} << Shape{1, 1}
                                             << Shape{2, 2, 2, 2} << Shape{2, 2} << 6 << false << lanes;
      row("grouped, 2 groups") << Shape{1, 8, 9, 11} << Shape{32, 3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                               << Shape{1, 1} << 2 << true << lanes;
      row("grouped, 3 filters per group") << Shape{1, 12, 8, 8} << Shape{12, 1, 3} << Shape{1, 2}
                                          << Shape{0, 1, 0, 1} << Shape{1, 1} << 4 << false << lanes;
      row("dilated 3x3") << Shape{1, 3, 16, 13} << Shape{10, 3, 3} << Shape{1, 1} << Shape{2, 2, 2, 2} << Shape{2, 2}
                         << 1 << false << lanes;
      row("stride per axis, asymmetric pads") << Shape{2, 4, 11, 17} << Shape{17, 3, 5} << Shape{2, 1}
                                              << Shape{0, 2, 1, 3} << Shape{1, 1} << 1 << true << lanes;
      row("ResNet stem-like 7x7 stride 2, bias") << Shape{1, 3, 32, 32} << Shape{16, 7, 7} << Shape{2, 2}
                                                 << Shape{3, 3, 3, 3} << Shape{1, 1} << 1 << true << lanes;
    }
  }
  void convMatchesDirectLoop() {
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    QFETCH(int, groups);
    QFETCH(bool, bias);
    QFETCH(int, lanes);
    Conv2dParams p = convParams(input, kernel[0], kernel[1], kernel[2]);
    setGeometry(p, strides, pads, dilations);
    p.groups = groups;
    p.bias = bias;
    Target target = targetWithLanes(lanes);
    auto w = checkedConv2d(p, DataType::float32(), target);
    QVERIFY2(w.ok(), qPrintable(errorOf(w)));
    auto schedule = defaultConv2dSchedule(*w, p, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    HostTensor data = smallValues(input, 1);
    HostTensor weight = smallValues({p.filters, p.channels / p.groups, p.kernelH, p.kernelW}, 2);
    HostTensor biasValues = smallValues({p.filters}, 3);
    std::vector<HostTensor> inputs{data, weight};
    if (bias) inputs.push_back(biasValues);
    auto got = runWorkload(*w, *schedule, inputs);
    QCOMPARE(got.size(), size_t(1));
    HostTensor value, magnitude;
    convReference(p, data, weight, bias ? &biasValues : nullptr, value, magnitude);
    std::string problem = compareSums(got[0], value, magnitude, p.channels / p.groups * p.kernelH * p.kernelW);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void prepackedConvMatchesDirectLoop_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("kernel");  // filters, R, S
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("pad");
    QTest::addColumn<int>("groups");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<int>("lanes");
    for (int lanes : {8, 16}) {
      auto row = [&](const char* name) -> QTestData& {
        return QTest::newRow((std::string(name) + " x" + std::to_string(lanes)).c_str());
      };
      row("3x3 pad 1") << Shape{1, 8, 10, 10} << Shape{32, 3, 3} << 1 << 1 << 1 << false << lanes;
      row("filters not a block multiple, bias") << Shape{1, 5, 9, 7} << Shape{20, 3, 3} << 1 << 1 << 1 << true << lanes;
      row("1x1 stride 2") << Shape{2, 16, 8, 8} << Shape{24, 1, 1} << 2 << 0 << 1 << false << lanes;
      row("stem 7x7 stride 2, bias") << Shape{1, 3, 23, 23} << Shape{16, 7, 7} << 2 << 3 << 1 << true << lanes;
      row("grouped") << Shape{1, 8, 6, 6} << Shape{16, 3, 3} << 1 << 1 << 2 << true << lanes;
      row("depthwise keeps OIHW") << Shape{1, 8, 6, 6} << Shape{8, 3, 3} << 1 << 1 << 8 << false << lanes;
    }
  }
  void prepackedConvMatchesDirectLoop() {
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(int, stride);
    QFETCH(int, pad);
    QFETCH(int, groups);
    QFETCH(bool, bias);
    QFETCH(int, lanes);
    Conv2dParams p = convParams(input, kernel[0], kernel[1], kernel[2]);
    p.stride = stride;
    p.pad = pad;
    p.groups = groups;
    p.bias = bias;
    Target target = targetWithLanes(lanes);
    HostTensor data = smallValues(input, 1);
    HostTensor weight = smallValues({p.filters, p.channels / p.groups, p.kernelH, p.kernelW}, 2);
    HostTensor biasValues = smallValues({p.filters}, 3);
    runtime::NDArray packed = packConv2dWeight(p, toArray(weight), target);
    if (!p.isDepthwise()) QCOMPARE(packed.shape(), conv2dPackedWeightShape(p, target));

    Workload w = conv2d(p, Conv2dWeightLayout::Packed, DataType::float32(), target);
    QCOMPARE(constShape(w.inputs[1]), packed.shape());
    auto schedule = defaultConv2dSchedule(w, p, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    std::vector<HostTensor> inputs{data, fromArray(packed)};
    if (bias) inputs.push_back(biasValues);
    auto got = runWorkload(w, *schedule, inputs);
    QCOMPARE(got.size(), size_t(1));
    HostTensor value, magnitude;
    convReference(p, data, weight, bias ? &biasValues : nullptr, value, magnitude);
    std::string problem = compareSums(got[0], value, magnitude, p.channels / p.groups * p.kernelH * p.kernelW);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void winogradConvMatchesDirectLoop_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<int>("filters");
    QTest::addColumn<int>("pad");
    QTest::addColumn<int>("dilation");
    QTest::addColumn<int>("tile");
    QTest::addColumn<int>("inputBlock");
    QTest::addColumn<bool>("blockedOutput");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<int>("lanes");
    for (int lanes : {8, 16}) {
      auto row = [&](const char* name) -> QTestData& {
        return QTest::newRow((std::string(name) + " x" + std::to_string(lanes)).c_str());
      };
      int block = lanes;
      row("F4, whole tiles, blocked") << Shape{1, 32, 8, 8} << 32 << 1 << 1 << 4 << block << true << false << lanes;
      row("F4, partial tiles, bias") << Shape{1, 16, 10, 11} << 32 << 1 << 1 << 4 << block << true << true << lanes;
      row("F4, no padding") << Shape{1, 16, 9, 9} << 32 << 0 << 1 << 4 << block << true << false << lanes;
      row("F2, batch 2") << Shape{2, 16, 7, 6} << 32 << 1 << 1 << 2 << block << true << true << lanes;
      row("F4, NCHW in and out") << Shape{1, 16, 9, 10} << 32 << 1 << 1 << 4 << 0 << false << true << lanes;
      row("F4, blocked in, NCHW out") << Shape{1, 32, 6, 6} << 64 << 1 << 1 << 4 << block << false << false << lanes;
      row("F4, dilation 2 (fcn)") << Shape{1, 16, 12, 12} << 32 << 2 << 2 << 4 << block << true << true << lanes;
      row("F4, dilation 4, 7 per phase") << Shape{1, 16, 28, 28} << 32 << 4 << 4 << 4 << block << true << false
                                         << lanes;
      row("F2, dilation 2, NCHW out") << Shape{1, 16, 8, 8} << 32 << 2 << 2 << 2 << block << false << true << lanes;
    }
  }
  void winogradConvMatchesDirectLoop() {
    QFETCH(Shape, input);
    QFETCH(int, filters);
    QFETCH(int, pad);
    QFETCH(int, dilation);
    QFETCH(int, tile);
    QFETCH(int, inputBlock);
    QFETCH(bool, blockedOutput);
    QFETCH(bool, bias);
    QFETCH(int, lanes);
    Conv2dParams p = convParams(input, filters, 3, 3);
    p.pad = pad;
    p.dilationH = p.dilationW = dilation;
    p.bias = bias;
    p.winogradTile = tile;
    QVERIFY2(p.validate().empty(), p.validate().c_str());
    Target target = targetWithLanes(lanes);
    Conv2dActivationLayout layout{inputBlock, blockedOutput};
    QVERIFY(conv2dSupportsActivationLayout(p, layout, target));
    HostTensor data = smallValues(input, 1);
    HostTensor weight = smallValues({p.filters, p.channels, 3, 3}, 2);
    HostTensor biasValues = smallValues({p.filters}, 3);
    runtime::NDArray packed = packConv2dWeight(p, layout, toArray(weight), target);
    QCOMPARE(packed.shape(), winogradPackedWeightShape(p, target));
    Workload w = conv2d(p, Conv2dWeightLayout::Packed, layout, DataType::float32(), target);
    QVERIFY(QString::fromStdString(w.name).contains("winograd"));
    auto schedule = defaultConv2dSchedule(w, p, layout, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    std::vector<HostTensor> inputs{inputBlock ? blockedCopy(data, inputBlock) : data, fromArray(packed)};
    if (bias) inputs.push_back(biasValues);
    auto got = runWorkload(w, *schedule, inputs);
    QCOMPARE(got.size(), size_t(1));
    HostTensor result = blockedOutput ? nchwCopy(got[0], conv2dFilterBlock(p, target)) : got[0];
    HostTensor value, magnitude;
    convReference(p, data, weight, bias ? &biasValues : nullptr, value, magnitude);
    // F(4, 3)'s transforms scale values by up to 8 and 1/24 on the way: a few more roundings.
    std::string problem = compareSums(result, value, magnitude, p.channels * 9, 16);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void winogradTransformsFoldToConstants() {
    // Each unrolled copy of a transform keeps only its row's non-zero coefficients: no select
    // on the row index survives lowering, and the products loop over channels with the
    // transformed tiles as scalars against filter vectors.
    Conv2dParams p = convParams({1, 64, 14, 14}, 64, 3, 3);
    p.pad = 1;
    p.winogradTile = 4;
    Target target = targetWithLanes(16);
    Conv2dActivationLayout layout{16, true};
    Workload w = conv2d(p, Conv2dWeightLayout::Packed, layout, DataType::float32(), target);
    auto schedule = defaultConv2dSchedule(w, p, layout, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(w, *schedule);
    for (const QString& line : text.split('\n'))
      if (line.contains("winograd") || line.contains("conv["))
        QVERIFY2(!line.contains("select("), qPrintable(line));
    QVERIFY2(text.contains("winograd.product.local"), qPrintable(text.left(4000)));
  }

  void winogradIsChosenOnlyWhereItPays() {
    Target target = targetWithLanes(16);
    Conv2dParams resnet = convParams({1, 64, 56, 56}, 64, 3, 3);
    resnet.pad = 1;
    QCOMPARE(winogradTileFor(resnet, target), int64_t(4));
    Conv2dParams fcn = convParams({1, 256, 28, 28}, 256, 3, 3);
    fcn.pad = fcn.dilationH = fcn.dilationW = 2;
    QCOMPARE(winogradTileFor(fcn, target), int64_t(4));
    // 14x14: 16 tiles of 4x4 are too few for F(4x4)'s larger filters; 49 of 2x2 are not.
    Conv2dParams stage3 = convParams({1, 256, 14, 14}, 256, 3, 3);
    stage3.pad = 1;
    QCOMPARE(winogradTileFor(stage3, target), int64_t(2));
    Conv2dParams strided = resnet;
    strided.stride = 2;
    QCOMPARE(winogradTileFor(strided, target), int64_t(0));
    Conv2dParams few = resnet;
    few.channels = 3;
    QCOMPARE(winogradTileFor(few, target), int64_t(0));
    Conv2dParams grouped = resnet;
    grouped.groups = 2;
    QCOMPARE(winogradTileFor(grouped, target), int64_t(0));
    // 7x7 outputs make 4 tiles: the transformed weights (4x the direct ones) would be read for
    // too few tiles to pay for themselves.
    Conv2dParams small = convParams({1, 512, 7, 7}, 512, 3, 3);
    small.pad = 1;
    QCOMPARE(winogradTileFor(small, target), int64_t(0));
    Conv2dParams badTile = resnet;
    badTile.winogradTile = 3;
    QVERIFY(QString::fromStdString(badTile.validate()).contains("winograd_tile"));
  }

  void prepackedConvDoesNotRepackPerCall() {
    // The point of packing at compile time: the kernel has no packing loop left.
    Conv2dParams p = convParams({1, 16, 14, 14}, 32, 3, 3);
    p.pad = 1;
    Workload plain = conv2d(p), packed = conv2d(p, Conv2dWeightLayout::Packed);
    auto loweredText = [&](const Workload& w) {
      auto schedule = defaultConv2dSchedule(w, p);
      if (!schedule) return QString("schedule failed: ") + QString::fromStdString(schedule.error().toString());
      auto lowered = lower(*schedule, w.args(), w.name);
      return lowered ? QString::fromStdString(toString(lowered->func)) : QString("lowering failed");
    };
    QVERIFY(loweredText(plain).contains("weight.packed"));
    QString text = loweredText(packed);
    QVERIFY2(!text.contains("weight.packed") && text.contains("parallel for"), qPrintable(text));
    QCOMPARE(packed.flops, plain.flops);
  }

  void nchwOutputTilesAreWrittenAsVectors() {
    // A tile goes out a filter at a time, its pixels as one vector store: with 3 input
    // channels, copying it element by element cost 6x the convolution (28 GFLOP/s).
    QString text = defaultLowering(convParams({8, 3, 64, 64}, 64, 3, 3));
    QVERIFY2(text.contains(QRegularExpression(R"(\n *conv\[ramp\()")), qPrintable(text.right(1500)));
  }

  void unpaddedConvReadsItsInputInPlace() {
    // A 1x1 convolution has nothing to pad: copying its whole input per call is wasted traffic.
    QString text = defaultLowering(convParams({1, 32, 14, 14}, 64, 1, 1));
    QVERIFY2(!text.contains("data.pad") && text.contains("data["), qPrintable(text));
  }

  void prepackedMatmulMatchesReference_data() {
    QTest::addColumn<Shape>("aShape");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("bTransposed");
    QTest::addColumn<int>("lanes");
    for (int lanes : {8, 16}) {
      auto row = [&](const char* name) -> QTestData& {
        return QTest::newRow((std::string(name) + " x" + std::to_string(lanes)).c_str());
      };
      row("matrix, n a panel multiple") << Shape{9, 12} << 32 << false << lanes;
      row("matrix, ragged last panel") << Shape{7, 5} << 20 << false << lanes;
      row("transposed B (Linear, Gemm transB)") << Shape{4, 24} << 40 << true << lanes;
      row("batched A (a sequence)") << Shape{2, 3, 8} << 40 << true << lanes;
      row("single row") << Shape{1, 64} << 10 << false << lanes;
      row("sequence first (rows on the first axis)") << Shape{13, 1, 24} << 40 << true << lanes;
      row("rows on a middle axis") << Shape{2, 11, 1, 8} << 20 << false << lanes;
    }
  }

  void prepackedMatmulTilesItsLongestLeadingAxis() {
    // PyTorch's sequence-first attention projects [197, 1, 768]: the 197 tokens are the rows
    // the register tile covers, not the unit axis (which made 197 matrix-vector products).
    Target target = targetWithLanes(16);
    Workload w = matmulPrepacked({197, 1, 768}, 2304, DataType::float32(), target);
    auto* compute = te::asCompute(w.outputs[0].op());
    QVERIFY(compute);
    QCOMPARE(compute->axes[0]->var.name(), std::string("i"));
    QCOMPARE(compute->axes[1]->var.name(), std::string("b0"));
    auto schedule = defaultMatmulSchedule(w, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w.args(), w.name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    // 8 rows of two 16-lane vectors in registers (one row before: float32[32]).
    QVERIFY2(text.contains("allocate C.local: float32[256] in local"), qPrintable(text.left(1500)));
  }
  void prepackedMatmulMatchesReference() {
    QFETCH(Shape, aShape);
    QFETCH(int, n);
    QFETCH(bool, bTransposed);
    QFETCH(int, lanes);
    Target target = targetWithLanes(lanes);
    int64_t k = aShape.back(), m = elementCount(aShape) / k;
    HostTensor a = smallValues(aShape, 1);
    HostTensor b = smallValues(bTransposed ? Shape{n, k} : Shape{k, n}, 2);
    runtime::NDArray packed = packMatmulBConstant(toArray(b), bTransposed, target);
    Workload w = matmulPrepacked(aShape, n, DataType::float32(), target);
    auto schedule = defaultMatmulSchedule(w, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto got = runWorkload(w, *schedule, {a, fromArray(packed)});
    QCOMPARE(got.size(), size_t(1));
    Shape outShape(aShape.begin(), aShape.end() - 1);
    outShape.push_back(n);
    HostTensor value = makeTensor(outShape, [](int64_t) { return 0.0; }), magnitude = value;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk) {
          double term = a.values[size_t(i * k + kk)] * b.values[size_t(bTransposed ? j * k + kk : kk * n + j)];
          value.values[size_t(i * n + j)] += term;
          magnitude.values[size_t(i * n + j)] += std::abs(term);
        }
    std::string problem = compareSums(got[0], value, magnitude, k);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  // Depthwise over NCHW<b>c (what AlterLayout makes of MobileNet's): the channel block as
  // vector lanes whatever the width, the stride or the padding, the weight packed in the
  // same blocks or read as OIHW.
  void blockedDepthwiseMatchesDirectLoop_data() {
    QTest::addColumn<Shape>("input");      // N, C, H, W
    QTest::addColumn<Shape>("kernel");     // R, S
    QTest::addColumn<Shape>("strides");    // along H, W
    QTest::addColumn<Shape>("pads");       // top, left, bottom, right
    QTest::addColumn<Shape>("dilations");  // along H, W
    QTest::addColumn<int>("block");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<bool>("packed");
    QTest::addColumn<int>("lanes");
    for (int lanes : {8, 16}) {
      std::string on = ", " + std::to_string(lanes) + " lanes";
      auto row = [&](const std::string& name) -> QTestData& { return QTest::newRow((name + on).c_str()); };
      row("3x3 pad 1, 7x7 rows") << Shape{1, 32, 7, 7} << Shape{3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                                 << Shape{1, 1} << 16 << true << true << lanes;
      row("3x3 stride 2, odd size") << Shape{1, 16, 15, 13} << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1}
                                    << Shape{1, 1} << 8 << false << true << lanes;
      row("5x5 stride 2, two images") << Shape{2, 24, 14, 14} << Shape{5, 5} << Shape{2, 2} << Shape{2, 2, 2, 2}
                                      << Shape{1, 1} << 8 << true << true << lanes;
      row("tall bands, wide rows") << Shape{1, 16, 40, 56} << Shape{3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                                   << Shape{1, 1} << 16 << true << true << lanes;
      row("dilated, asymmetric pads, OIHW weight") << Shape{1, 12, 11, 17} << Shape{3, 3} << Shape{1, 2}
                                                   << Shape{2, 0, 1, 3} << Shape{2, 1} << 4 << true << false << lanes;
      row("no padding") << Shape{1, 8, 6, 9} << Shape{3, 3} << Shape{1, 1} << Shape{0, 0, 0, 0} << Shape{1, 1} << 8
                        << false << true << lanes;
    }
  }
  void blockedDepthwiseMatchesDirectLoop() {
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    QFETCH(int, block);
    QFETCH(bool, bias);
    QFETCH(bool, packed);
    QFETCH(int, lanes);
    Conv2dParams p = convParams(input, input[1], kernel[0], kernel[1]);
    setGeometry(p, strides, pads, dilations);
    p.groups = p.channels;
    p.bias = bias;
    Target target = targetWithLanes(lanes);
    Conv2dActivationLayout layout{block, true};
    QVERIFY(conv2dSupportsActivationLayout(p, layout, target));
    QCOMPARE(conv2dFilterBlock(p, layout, target), int64_t(block));
    HostTensor data = smallValues(input, 1);
    HostTensor weight = smallValues({p.filters, 1, p.kernelH, p.kernelW}, 2);
    HostTensor biasValues = smallValues({p.filters}, 3);
    HostTensor weightGiven = weight;
    if (packed) {
      runtime::NDArray array = packConv2dWeight(p, layout, toArray(weight), target);
      QCOMPARE(array.shape(), conv2dPackedWeightShape(p, layout, target));
      weightGiven = fromArray(array);
    }
    Workload w = conv2d(p, packed ? Conv2dWeightLayout::Packed : Conv2dWeightLayout::Plain, layout,
                        DataType::float32(), target);
    QCOMPARE(constShape(w.inputs[1]), weightGiven.shape);
    auto schedule = defaultConv2dSchedule(w, p, layout, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    std::vector<HostTensor> inputs{blockedCopy(data, block), weightGiven};
    if (bias) inputs.push_back(biasValues);
    auto got = runWorkload(w, *schedule, inputs);
    QCOMPARE(got.size(), size_t(1));
    HostTensor value, magnitude;
    convReference(p, data, weight, bias ? &biasValues : nullptr, value, magnitude);
    std::string problem = compareSums(nchwCopy(got[0], block), value, magnitude, p.kernelH * p.kernelW);
    QVERIFY2(problem.empty(), problem.c_str());
  }

  void blockedDepthwiseRefusesWhatItCannotCompute() {
    Conv2dParams p = convParams({1, 16, 8, 8}, 16, 3, 3);
    p.groups = 16;
    QVERIFY(!conv2dSupportsActivationLayout(p, {8, false}));  // blocked in, NCHW out
    QVERIFY(!conv2dSupportsActivationLayout(p, {0, true}));   // NCHW in, blocked out
    QVERIFY(!conv2dSupportsActivationLayout(p, {5, true}));   // 5 does not divide the channels
    Conv2dParams multiplier = convParams({1, 8, 8, 8}, 16, 3, 3);
    multiplier.groups = 8;  // two filters per channel
    QVERIFY(!conv2dSupportsActivationLayout(multiplier, {8, true}));
  }

  // The blocked depthwise schedule pads each band of rows inside its parallel task: one
  // parallel loop, no padded copy of the whole input, the block's 16 channels as the lanes.
  void blockedDepthwisePadsEachBandInItsTask() {
    Conv2dParams p = convParams({1, 64, 28, 28}, 64, 3, 3);
    p.pad = 1;
    p.groups = 64;
    Target target = targetWithLanes(8);
    Conv2dActivationLayout layout{16, true};
    Workload w = conv2d(p, Conv2dWeightLayout::Packed, layout, DataType::float32(), target);
    auto schedule = defaultConv2dSchedule(w, p, layout, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w.args(), w.name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QCOMPARE(text.count("parallel for"), 1);
    int parallel = int(text.indexOf("parallel for")), allocation = int(text.indexOf("allocate data.pad"));
    QVERIFY2(allocation > parallel, qPrintable(text));
    QVERIFY2(text.contains(QRegularExpression("data\\.pad\\[ramp\\([^)]*, 1, 16\\)\\]")), qPrintable(text));
  }

  void depthwiseScheduleVectorizesOnlyRealChannels() {
    // Depthwise does kernel-sized work per output (no block-diagonal zero filters): its
    // reduction has only the kernel taps, the pixels are vector lanes and rows run in parallel.
    Conv2dParams p = convParams({1, 32, 28, 28}, 32, 3, 3);
    p.pad = 1;
    p.groups = 32;
    Target target = targetWithLanes(8);
    Workload w = conv2d(p, DataType::float32(), target);
    QCOMPARE(w.flops, 2.0 * 32 * 28 * 28 * 9);
    auto schedule = defaultConv2dSchedule(w, p, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w.args(), w.name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("parallel for") && text.contains("ramp("), qPrintable(text));
    QVERIFY2(!text.contains("weight.packed"), qPrintable(text));
  }

  void symmetricParametersKeepTheirName() {
    // Existing callers (CLI, tuning records) identify a conv by its name.
    Conv2dParams p = convParams({1, 8, 16, 16}, 16, 3, 3);
    p.pad = 1;
    QCOMPARE(QString::fromStdString(conv2d(p).name), QString("conv2d_n1c8h16w16k16r3s3st1p1"));
    p.padTop = 1;  // equal to pad: the same convolution
    QCOMPARE(QString::fromStdString(conv2d(p).name), QString("conv2d_n1c8h16w16k16r3s3st1p1"));
    p.padBottom = 2;
    QVERIFY(QString::fromStdString(conv2d(p).name) != "conv2d_n1c8h16w16k16r3s3st1p1");
  }



  void invalidConvIsDiagnosed_data() {
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("expected");
    Conv2dParams p = convParams({1, 6, 8, 8}, 8, 3, 3);
    Conv2dParams groups = p;
    groups.groups = 4;
    QTest::newRow("groups do not divide") << errorOf(checkedConv2d(groups)) << "must divide";
    Conv2dParams dilation = p;
    dilation.dilationW = 0;
    QTest::newRow("dilation 0") << errorOf(checkedConv2d(dilation)) << "dilation must be positive";
    Conv2dParams padding = p;
    padding.padLeft = -1;
    QTest::newRow("negative pad") << errorOf(checkedConv2d(padding)) << "padding must not be negative";
    Conv2dParams stride = p;
    stride.strideH = 0;
    QTest::newRow("stride 0") << errorOf(checkedConv2d(stride)) << "stride must be positive";
    Conv2dParams large = p;
    large.dilationH = 4;
    QTest::newRow("dilated kernel too large") << errorOf(checkedConv2d(large)) << "larger than the padded input";
  }
  void invalidConvIsDiagnosed() {
    QFETCH(QString, message);
    QFETCH(QString, expected);
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void gemmMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("transA");
    QTest::addColumn<bool>("transB");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("beta");
    QTest::addColumn<Shape>("bias");  // {-1}: no C
    QTest::newRow("Linear: transB, bias row") << 4 << 40 << 33 << false << true << 1.0 << 1.0 << Shape{40};
    QTest::newRow("plain product") << 17 << 45 << 23 << false << false << 1.0 << 1.0 << Shape{-1};
    QTest::newRow("plain dense") << 9 << 20 << 8 << false << true << 1.0 << 1.0 << Shape{-1};
    QTest::newRow("transA, alpha, beta, column C") << 13 << 30 << 19 << true << false << 0.5 << -2.0 << Shape{13, 1};
    QTest::newRow("both transposed, full C") << 8 << 11 << 64 << true << true << 1.5 << 0.25 << Shape{8, 11};
    QTest::newRow("scalar C") << 5 << 70 << 7 << false << false << 1.0 << 3.0 << Shape{};
    QTest::newRow("C of one element, beta 0") << 3 << 16 << 5 << false << true << 2.0 << 0.0 << Shape{1, 1};
  }
  void gemmMatchesReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(bool, transA);
    QFETCH(bool, transB);
    QFETCH(double, alpha);
    QFETCH(double, beta);
    QFETCH(Shape, bias);
    GemmParams p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.transA = transA;
    p.transB = transB;
    p.alpha = alpha;
    p.beta = beta;
    bool hasBias = bias != Shape{-1};
    if (hasBias) p.biasShape = bias;
    for (int lanes : {0, 8}) {
      Target target = targetWithLanes(lanes);
      auto w = gemm(p, DataType::float32(), target);
      QVERIFY2(w.ok(), qPrintable(errorOf(w)));
      auto schedule = defaultGemmSchedule(*w, target);
      QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
      HostTensor a = smallValues(transA ? Shape{k, m} : Shape{m, k}, 1);
      HostTensor b = smallValues(transB ? Shape{n, k} : Shape{k, n}, 2);
      HostTensor c = smallValues(hasBias ? bias : Shape{1}, 3);
      std::vector<HostTensor> inputs{a, b};
      if (hasBias && beta != 0) inputs.push_back(c);  // C scaled by 0 is no input
      QCOMPARE(w->inputs.size(), inputs.size());
      auto got = runWorkload(*w, *schedule, inputs);
      QCOMPARE(got.size(), size_t(1));
      HostTensor value = makeTensor({m, n}, [](int64_t) { return 0.0; }), magnitude = value;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0, size = 0;
          for (int64_t q = 0; q < k; ++q) {
            double term = a.values[size_t(transA ? q * m + i : i * k + q)] * b.values[size_t(transB ? j * k + q : q * n + j)];
            sum += term;
            size += std::abs(term);
          }
          sum *= alpha;
          size *= std::abs(alpha);
          if (hasBias) {
            Shape at;
            for (size_t d = 0; d < bias.size(); ++d)
              at.push_back(bias[d] == 1 ? 0 : (d + 2 - bias.size() == 0 ? i : j));
            double term = beta * c.values[size_t(offsetOf(bias, at))];
            sum += term;
            size += std::abs(term);
          }
          value.values[size_t(i * n + j)] = sum;
          magnitude.values[size_t(i * n + j)] = size;
        }
      std::string problem = compareSums(got[0], value, magnitude, k);
      QVERIFY2(problem.empty(), (problem + (lanes ? " (8 lanes)" : " (host)")).c_str());
    }
  }

  void plainGemmIsTheDenseKernel() {
    // Without bias or scaling Gemm is exactly dense/matmul: same kernel, same default schedule.
    GemmParams p;
    p.m = 32;
    p.n = 64;
    p.k = 48;
    p.transB = true;
    auto w = gemm(p);
    QVERIFY(w.ok());
    QCOMPARE(QString::fromStdString(w->name), QString::fromStdString(dense(32, 64, 48).name));
    auto gemmSchedule = defaultGemmSchedule(*w);
    auto denseSchedule = defaultMatmulSchedule(*w);
    QVERIFY(gemmSchedule.ok() && denseSchedule.ok());
    QVERIFY(gemmSchedule->trace() == denseSchedule->trace());
  }

  void gemmEpilogueStaysInTheRegisterTile() {
    // Bias and scaling are applied as each tile leaves the registers: the accumulator tile
    // is a local buffer inside the parallel loop, and the output loop stores vectors.
    GemmParams p;
    p.m = 64;
    p.n = 64;
    p.k = 64;
    p.alpha = 0.5;
    p.biasShape = Shape{64};
    Target target = targetWithLanes(8);
    auto w = gemm(p, DataType::float32(), target);
    QVERIFY(w.ok());
    auto schedule = defaultGemmSchedule(*w, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("parallel for") && text.contains("ramp(") && text.contains("C.local"), qPrintable(text));
  }

  void invalidGemmIsDiagnosed_data() {
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("expected");
    GemmParams p;
    p.m = 4;
    p.n = 6;
    p.k = 3;
    GemmParams wrongBias = p;
    wrongBias.biasShape = Shape{4};
    QTest::newRow("C does not broadcast") << errorOf(gemm(wrongBias)) << "does not broadcast";
    GemmParams rank3 = p;
    rank3.biasShape = Shape{1, 4, 6};
    QTest::newRow("C rank 3") << errorOf(gemm(rank3)) << "rank 3";
    GemmParams empty = p;
    empty.k = 0;
    QTest::newRow("k 0") << errorOf(gemm(empty)) << "must be positive";
  }
  void invalidGemmIsDiagnosed() {
    QFETCH(QString, message);
    QFETCH(QString, expected);
    QVERIFY2(message.contains(expected), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestOpsConv)
#include "test_ops_conv.moc"
