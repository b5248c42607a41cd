// Opset 18, the newest Tessel reads: the operators whose definitions it changed (reductions
// with their axes as an input, Split's num_outputs, Pad's axes) and Mish, GroupNormalization,
// CenterCropPad, Col2Im and the bitwise operators, which it added, run with opset 18's meaning through the path
// `tessel run` takes.
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/OnnxModelBuilder.h"

#include <cmath>
#include <fstream>

#include "compiler/driver/RunModel.h"

using namespace tessel;
using tessel::testing::addAttribute;
using tessel::testing::ModelBuilder;

namespace {

QString errorText(const Diagnostic& error) { return QString::fromStdString(error.toString()); }

runtime::NDArray floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  array.copyFrom(values);
  return array;
}

Expected<driver::RunResult> run(const ModelBuilder& model, std::vector<driver::InputValue> inputs) {
  static QTemporaryDir directory;
  const std::string path = directory.filePath("model.onnx").toStdString();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << model.bytes();
  driver::RunRequest request;
  request.model = path;
  request.positionalInputs = std::move(inputs);
  return driver::runModel(request);
}

}  // namespace

class OnnxNewestOpsetTest : public QObject {
  Q_OBJECT

private slots:
  // Every reduction takes its axes from an input at opset 18 (ReduceSum did from 13).
  void reductionsTakeTheirAxesFromAnInput() {
    ModelBuilder model(18);
    model.input("x", {2, 3});
    model.int64Initializer("rows", {1}, {1});
    model.node("ReduceMean", {"x", "rows"}, {"mean"});
    model.node("ReduceMax", {"x", "rows"}, {"max"});
    auto* keep = model.node("ReduceL2", {"x", "rows"}, {"norm"});
    addAttribute(keep, "keepdims", onnx::AttributeProto::INT)->set_i(0);
    for (const char* output : {"mean", "max", "norm"}) model.output(output);
    auto result = run(model, {floats({2, 3}, {1, 2, 3, 4, 6, 8})});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{2, 1}));
    QCOMPARE(result->outputs[0].toVector<float>(), (std::vector<float>{2, 6}));
    QCOMPARE(result->outputs[1].toVector<float>(), (std::vector<float>{3, 8}));
    QCOMPARE(result->outputs[2].shape(), (std::vector<int64_t>{2}));
    QVERIFY(std::fabs(result->outputs[2].toVector<float>()[0] - std::sqrt(14.0f)) < 1e-5f);
  }

  // Split into num_outputs parts (the last one shorter), and Pad only the axes named.
  void splitCountsItsPartsAndPadNamesItsAxes() {
    ModelBuilder model(18);
    model.input("x", {2, 5});
    auto* split = model.node("Split", {"x"}, {"a", "b"});
    addAttribute(split, "axis", onnx::AttributeProto::INT)->set_i(1);
    addAttribute(split, "num_outputs", onnx::AttributeProto::INT)->set_i(2);
    model.int64Initializer("pads", {2}, {1, 2});  // before and after, for the one axis named
    model.initializer("fill", {}, {9.0f});
    model.int64Initializer("last_axis", {1}, {-1});
    model.node("Pad", {"b", "pads", "fill", "last_axis"}, {"padded"});
    model.output("a");
    model.output("padded");
    auto result = run(model, {floats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{2, 3}));
    QCOMPARE(result->outputs[0].toVector<float>(), (std::vector<float>{0, 1, 2, 5, 6, 7}));
    QCOMPARE(result->outputs[1].shape(), (std::vector<int64_t>{2, 5}));
    QCOMPARE(result->outputs[1].toVector<float>(), (std::vector<float>{9, 3, 4, 9, 9, 9, 8, 9, 9, 9}));
  }

  // Mish(x) = x * tanh(softplus(x)), far out on both sides too.
  void mishMatchesItsDefinition() {
    ModelBuilder model(18);
    model.input("x", {5});
    model.node("Mish", {"x"}, {"y"});
    model.output("y");
    const std::vector<float> x = {-30, -1, 0, 1.5f, 30};
    auto result = run(model, {floats({5}, x)});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    std::vector<float> y = result->outputs[0].toVector<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      double expected = x[i] * std::tanh(std::log1p(std::exp(double(x[i]))));
      QVERIFY2(std::fabs(y[i] - expected) <= 1e-5 + 1e-5 * std::fabs(expected),
               qPrintable(QString("Mish(%1) = %2, expected %3").arg(x[i]).arg(y[i]).arg(expected)));
    }
  }

  // BitwiseAnd/Or/Xor/Not (opset 18) and BitShift, chained into one fused kernel over a
  // length that is no multiple of a vector, on int32 with the sign bit set in half the values.
  void bitwiseOperatorsMatchCpp() {
    ModelBuilder model(18);
    model.input("a", {1003}, onnx::TensorProto::INT32);
    model.input("b", {1003}, onnx::TensorProto::INT32);
    model.input("u", {1003}, onnx::TensorProto::UINT32);
    model.input("n", {1003}, onnx::TensorProto::UINT32);
    model.node("BitwiseAnd", {"a", "b"}, {"and"});
    model.node("BitwiseXor", {"and", "a"}, {"xor"});
    model.node("BitwiseNot", {"b"}, {"not"});
    model.node("BitwiseOr", {"xor", "not"}, {"y"});
    addAttribute(model.node("BitShift", {"u", "n"}, {"shifted"}), "direction", onnx::AttributeProto::STRING)
        ->set_s("RIGHT");
    model.output("y");
    model.output("shifted");
    std::vector<int32_t> a(1003), b(1003);
    std::vector<uint32_t> u(1003), n(1003);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = int32_t(uint32_t(i) * 2654435761u);
      b[i] = int32_t(uint32_t(i + 7) * 2246822519u);
      u[i] = uint32_t(i) * 3266489917u;
      n[i] = uint32_t(i % 40);  // 32 and beyond shift everything out
    }
    auto array = [](auto& values, runtime::DataType type) {
      auto out = runtime::NDArray::empty({int64_t(values.size())}, type);
      out.copyFrom(values);
      return out;
    };
    auto result = run(model, {array(a, runtime::DataType::int32()), array(b, runtime::DataType::int32()),
                              array(u, runtime::DataType{runtime::DataType::Code::UInt, 32, 1}), array(n, runtime::DataType{runtime::DataType::Code::UInt, 32, 1})});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    std::vector<int32_t> y = result->outputs[0].toVector<int32_t>();
    std::vector<uint32_t> shifted = result->outputs[1].toVector<uint32_t>();
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(y[i], ((a[i] & b[i]) ^ a[i]) | ~b[i]);
      QCOMPARE(shifted[i], n[i] >= 32 ? 0u : u[i] >> n[i]);
    }
  }

  // GroupNormalization (opset 18): each group of channels normalized over its channels and
  // pixels together, then scaled and shifted by the group's own scale and bias.
  void groupNormalizationNormalizesEachGroup() {
    ModelBuilder model(18);
    model.input("x", {1, 4, 2});
    model.initializer("scale", {2}, {1.0f, 2.0f});
    model.initializer("bias", {2}, {0.0f, 10.0f});
    auto* norm = model.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "groups");
    addAttribute(norm, "num_groups", onnx::AttributeProto::INT)->set_i(2);
    addAttribute(norm, "epsilon", onnx::AttributeProto::FLOAT)->set_f(0.0f);
    model.output("y");
    // Group 0: channels 0-1 {1, 2, 3, 4}; group 1: channels 2-3 {10, 10, 30, 30}.
    auto result = run(model, {floats({1, 4, 2}, {1, 2, 3, 4, 10, 10, 30, 30})});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{1, 4, 2}));
    const float s = 1.0f / std::sqrt(1.25f);  // group 0: mean 2.5, variance 1.25
    const std::vector<float> expected = {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s, 8, 8, 12, 12};  // group 1: +-1 * 2 + 10
    std::vector<float> y = result->outputs[0].toVector<float>();
    for (size_t i = 0; i < y.size(); ++i)
      QVERIFY2(std::fabs(y[i] - expected[i]) < 1e-5f, qPrintable(QString("y[%1] = %2, expected %3").arg(i).arg(y[i]).arg(expected[i])));
  }

  // CenterCropPad: axis 1 (5 -> 2) cropped around its centre, the odd element left at the end;
  // the last axis (2 -> 5) padded with zeros around it, the extra zero at the end.
  void centerCropPadCropsAndPadsAroundTheCentre() {
    ModelBuilder model(18);
    model.input("x", {1, 5, 2});
    model.int64Initializer("size", {2}, {2, 5});
    auto* crop = model.node("CenterCropPad", {"x", "size"}, {"y"});
    auto* axes = addAttribute(crop, "axes", onnx::AttributeProto::INTS);
    axes->add_ints(1);
    axes->add_ints(-1);
    model.output("y");
    auto result = run(model, {floats({1, 5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{1, 2, 5}));
    // Rows 1 and 2 of the input ((5 - 2) / 2 = 1 dropped before, 2 after), one zero before.
    QCOMPARE(result->outputs[0].toVector<float>(), (std::vector<float>{0, 2, 3, 0, 0, 0, 4, 5, 0, 0}));
  }

  // Col2Im adds each block element back where its block sat: strides, asymmetric pads and
  // dilation against a loop that scatters the blocks as ONNX's definition reads.
  void col2imAddsOverlappingBlocksBack() {
    const int64_t channels = 2, height = 5, width = 4, blockH = 2, blockW = 2;
    const int64_t strideH = 2, strideW = 1, padTop = 1, padLeft = 0, padBottom = 0, padRight = 1, dilationW = 2;
    const int64_t blocksH = (height + padTop + padBottom - (blockH - 1) - 1) / strideH + 1;
    const int64_t blocksW = (width + padLeft + padRight - dilationW * (blockW - 1) - 1) / strideW + 1;
    const int64_t rows = channels * blockH * blockW, blocks = blocksH * blocksW;
    std::vector<float> columns(size_t(rows * blocks));
    for (size_t i = 0; i < columns.size(); ++i) columns[i] = float(int(i % 7) - 3) + 0.25f * float(i % 3);
    std::vector<float> expected(size_t(channels * height * width), 0.0f);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t ki = 0; ki < blockH; ++ki)
        for (int64_t kj = 0; kj < blockW; ++kj)
          for (int64_t bi = 0; bi < blocksH; ++bi)
            for (int64_t bj = 0; bj < blocksW; ++bj) {
              int64_t y = bi * strideH - padTop + ki, x = bj * strideW - padLeft + kj * dilationW;
              if (y < 0 || y >= height || x < 0 || x >= width) continue;
              expected[size_t((c * height + y) * width + x)] +=
                  columns[size_t(((c * blockH + ki) * blockW + kj) * blocks + bi * blocksW + bj)];
            }

    ModelBuilder model(18);
    model.input("columns", {1, rows, blocks});
    model.int64Initializer("image", {2}, {height, width});
    model.int64Initializer("block", {2}, {blockH, blockW});
    auto* fold = model.node("Col2Im", {"columns", "image", "block"}, {"y"});
    auto ints = [&](const char* name, std::vector<int64_t> values) {
      auto* attribute = addAttribute(fold, name, onnx::AttributeProto::INTS);
      for (int64_t value : values) attribute->add_ints(value);
    };
    ints("strides", {strideH, strideW});
    ints("pads", {padTop, padLeft, padBottom, padRight});
    ints("dilations", {1, dilationW});
    model.output("y");
    auto result = run(model, {floats({1, rows, blocks}, columns)});
    QVERIFY2(result, qPrintable(result ? QString() : errorText(result.error())));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{1, channels, height, width}));
    std::vector<float> y = result->outputs[0].toVector<float>();
    for (size_t i = 0; i < y.size(); ++i)
      QVERIFY2(std::fabs(y[i] - expected[i]) < 1e-5f,
               qPrintable(QString("y[%1] = %2, expected %3").arg(i).arg(y[i]).arg(expected[i])));

    // A block count that does not fit the image is named, not guessed.
    ModelBuilder wrong(18);
    wrong.input("columns", {1, rows, blocks + 1});
    wrong.int64Initializer("image", {2}, {height, width});
    wrong.int64Initializer("block", {2}, {blockH, blockW});
    wrong.node("Col2Im", {"columns", "image", "block"}, {"y"});
    wrong.output("y");
    auto refused = run(wrong, {floats({1, rows, blocks + 1}, std::vector<float>(size_t(rows * (blocks + 1))))});
    QVERIFY(!refused);
    QVERIFY2(errorText(refused.error()).contains("the input holds " + QString::number(blocks + 1) + " blocks"),
             qPrintable(errorText(refused.error())));
  }
};

QTEST_GUILESS_MAIN(OnnxNewestOpsetTest)
#include "test_onnx_newest_opset.moc"
