// The int8 depthwise convolution against a plain C++ reference of the same quantized
// arithmetic (int32 accumulation of the widened bytes, padding that reads the data's zero
// point, the requantization rounded half to even and saturated): channel blocks of 16 and
// 32, stride 1 and 2 with odd sizes, a 5x5 kernel with dilation, a fused Relu, int8 data and
// output, and the same kernel on a CPU without VNNI and without AVX.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Int8DepthwiseConv2d.h"

using namespace tessel;

namespace {

Target withoutFeatures(int cpu) {
  Target target = hostTarget();
  std::erase_if(target.features, [&](const std::string& f) {
    if (cpu >= 1 && (f == "avx512vnni" || f == "avxvnni")) return true;
    return cpu == 2 && (f.rfind("avx", 0) == 0 || f == "fma" || f == "f16c");
  });
  target.vectorBits = Target::vectorBitsForFeatures(target.features);
  return target;
}

}  // namespace

class TestOpsInt8Depthwise : public QObject {
  Q_OBJECT
private slots:
  void matchesReference_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("dilation");
    QTest::addColumn<int>("block");
    QTest::addColumn<bool>("signedBytes");
    QTest::addColumn<bool>("relu");
    QTest::addColumn<int>("cpu");  // 0 host, 1 without VNNI, 2 without AVX
    QTest::newRow("3x3, block 16") << 32 << 14 << 3 << 1 << 1 << 16 << false << true << 0;
    QTest::newRow("3x3 stride 2, odd size, block 32") << 64 << 15 << 3 << 2 << 1 << 32 << false << false << 0;
    QTest::newRow("5x5 dilated, int8") << 16 << 11 << 5 << 1 << 2 << 16 << true << true << 0;
    QTest::newRow("without VNNI") << 32 << 9 << 3 << 2 << 1 << 16 << false << true << 1;
    QTest::newRow("without AVX") << 32 << 7 << 3 << 1 << 1 << 32 << true << false << 2;
  }
  void matchesReference() {
    QFETCH(int, channels);
    QFETCH(int, size);
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, dilation);
    QFETCH(int, block);
    QFETCH(bool, signedBytes);
    QFETCH(bool, relu);
    QFETCH(int, cpu);
    Int8DepthwiseConv2dParams params;
    Conv2dParams& p = params.conv;
    p.channels = p.filters = p.groups = channels;
    p.height = p.width = size;
    p.kernelH = p.kernelW = kernel;
    p.stride = stride;
    p.dilationH = p.dilationW = dilation;
    p.pad = dilation * (kernel - 1) / 2;
    params.block = block;
    params.relu = relu;
    params.dataType = params.outputType = signedBytes ? DataType::int8() : DataType::uint8();
    params.dataZeroPoint = signedBytes ? -5 : 131;
    params.outputZeroPoint = signedBytes ? 3 : 120;
    QVERIFY2(params.validate().empty(), params.validate().c_str());
    Workload w = int8DepthwiseConv2d(params);
    Target target = withoutFeatures(cpu);
    auto schedule = defaultInt8DepthwiseConv2dSchedule(w, params, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), w.name, target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());

    std::mt19937 rng(uint32_t(channels * 31 + size));
    std::uniform_int_distribution<int> byte(signedBytes ? -128 : 0, signedBytes ? 127 : 255), weightByte(-127, 127);
    std::uniform_int_distribution<int> offsetValue(-3000, 3000);
    const int64_t C = channels, H = size, W = size, R = kernel, B = block;
    std::vector<int> data(size_t(C * H * W));  // NCHW
    for (int& v : data) v = byte(rng);
    std::vector<int8_t> weight(size_t(C * R * R));  // OIHW, one input channel
    for (int8_t& v : weight) v = int8_t(weightByte(rng));
    std::vector<int32_t> offset(static_cast<size_t>(C));
    std::vector<float> scale(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      offset[size_t(c)] = offsetValue(rng);
      scale[size_t(c)] = 0.0007f + 0.0001f * float(c % 5);
    }
    runtime::DataType byteType = signedBytes ? runtime::DataType::int8() : runtime::DataType::uint8();
    auto dataArray = runtime::NDArray::empty({1, C / B, H, W, B}, byteType);
    auto* blocked = static_cast<uint8_t*>(dataArray.data());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          blocked[(((c / B) * H + y) * W + x) * B + c % B] = uint8_t(data[size_t((c * H + y) * W + x)]);
    auto packed = packInt8DepthwiseWeight(params, weight.data());
    auto weightArray = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
    weightArray.copyFrom(packed.data(), packed.size());
    auto offsetArray = runtime::NDArray::empty({C}, runtime::DataType::int32());
    offsetArray.copyFrom(offset.data(), offset.size() * 4);
    auto scaleArray = runtime::NDArray::empty({C}, runtime::DataType::float32());
    scaleArray.copyFrom(scale.data(), scale.size() * 4);
    const int64_t OH = p.outHeight(), OW = p.outWidth();
    auto out = runtime::NDArray::empty({1, C / B, OH, OW, B}, byteType);
    built->function(dataArray, weightArray, offsetArray, scaleArray, out);

    const double low = signedBytes ? -128 : 0, high = signedBytes ? 127 : 255;
    const auto* got = static_cast<const uint8_t*>(out.data());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          int32_t acc = 0;
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < R; ++s) {
              int64_t iy = y * stride + r * dilation - p.pad, ix = x * stride + s * dilation - p.pad;
              bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
              int value = inside ? data[size_t((c * H + iy) * W + ix)] : int(params.dataZeroPoint);
              acc += value * weight[size_t((c * R + r) * R + s)];
            }
          float v = float(acc + offset[size_t(c)]) * scale[size_t(c)];
          double zero = double(params.outputZeroPoint);
          double q = std::nearbyint(std::clamp(double(v), low - zero, high - zero)) + zero;
          if (relu) q = std::max(q, zero);
          uint8_t bits = got[(((c / B) * OH + y) * OW + x) * B + c % B];
          double value = signedBytes ? double(int8_t(bits)) : double(bits);
          if (value != q)
            QFAIL(qPrintable(QString("channel %1 at (%2, %3): %4, expected %5").arg(c).arg(y).arg(x).arg(value).arg(q)));
        }
  }

  void refusesWhatItCannotCompute() {
    Int8DepthwiseConv2dParams params;
    params.conv.channels = params.conv.filters = params.conv.groups = 24;
    params.conv.height = params.conv.width = 8;
    params.conv.kernelH = params.conv.kernelW = 3;
    params.block = 16;
    QVERIFY(params.validate().find("does not divide 24 channels") != std::string::npos);
    params.block = 8;
    params.conv.groups = 1;
    QVERIFY(params.validate().find("one filter per channel") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestOpsInt8Depthwise)
#include "test_ops_int8_depthwise.moc"
