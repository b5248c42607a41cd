// The int8 VNNI convolution against a plain C++ reference of the same quantized arithmetic:
// padding with the input's zero point, strides, 1x1 and 3x3 kernels, every filter block, a
// fused Relu, and the same kernel on a CPU without VNNI (its AVX-512BW form) and without AVX;
// blocks of 64 on AMX tiles (when the CPU has them) and without.
#include <QtTest>

#include <cmath>
#include <random>

#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Int8Conv2d.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;

namespace {

Target withoutFeatures(bool vnni, bool avx) {
  Target target = hostTarget();
  std::erase_if(target.features, [&](const std::string& f) {
    if (!vnni && (f == "avx512vnni" || f == "avxvnni")) return true;
    return !avx && (f.rfind("avx", 0) == 0 || f == "fma" || f == "f16c");
  });
  target.vectorBits = Target::vectorBitsForFeatures(target.features);
  return target;
}

Target withoutTiles() {
  Target target = hostTarget();
  std::erase_if(target.features, [](const std::string& f) { return f.rfind("amx", 0) == 0; });
  return target;
}

// requantize as ONNX's QLinearConv does it, in float32 like the kernel.
int requantized(int32_t accumulator, float scale, int64_t zeroPoint, bool relu, bool signedOutput) {
  float low = signedOutput ? -128.0f : 0.0f, high = signedOutput ? 127.0f : 255.0f;
  float value = std::nearbyint(float(accumulator) * scale) + float(zeroPoint);
  value = std::min(high, std::max(relu ? float(zeroPoint) : low, value));
  return int(value);
}

}  // namespace

class TestOpsInt8Conv : public QObject {
  Q_OBJECT
private slots:
  void matchesReference_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("filters");
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("pad");
    QTest::addColumn<int>("inputBlock");
    QTest::addColumn<int>("filterBlock");
    QTest::addColumn<bool>("relu");
    QTest::addColumn<int>("cpu");  // 0 host, 1 without VNNI, 2 without AVX, 3 without AMX
    QTest::addColumn<bool>("nchw");
    QTest::addColumn<bool>("signedTypes");  // int8 data and output
    QTest::addColumn<bool>("nchwOutputOnly");  // blocked input, NCHW output
    QTest::newRow("3x3 pad 1") << 32 << 9 << 64 << 3 << 1 << 1 << 16 << 32 << false << 0 << false << false << false;
    QTest::newRow("1x1 stride 2 relu") << 16 << 8 << 32 << 1 << 2 << 0 << 4 << 16 << true << 0 << false << false << false;
    QTest::newRow("7 wide: a tile tail") << 8 << 7 << 32 << 3 << 1 << 1 << 8 << 32 << false << 0 << false << false << false;
    QTest::newRow("3x3 without VNNI") << 32 << 9 << 64 << 3 << 1 << 1 << 16 << 32 << true << 1 << false << false << false;
    QTest::newRow("3x3 without AVX") << 16 << 6 << 32 << 3 << 1 << 1 << 16 << 16 << false << 2 << false << false << false;
    QTest::newRow("NCHW in and out") << 32 << 9 << 64 << 3 << 1 << 1 << 16 << 32 << false << 0 << true << false << false;
    QTest::newRow("NCHW int8 1x1") << 16 << 7 << 32 << 1 << 1 << 0 << 16 << 16 << true << 0 << true << true << false;
    QTest::newRow("NCHW 3 channels, stride 2") << 3 << 11 << 16 << 3 << 2 << 1 << 4 << 16 << false << 0 << true << false << false;
    QTest::newRow("NCHW 24 filters in a block of 16") << 16 << 7 << 24 << 1 << 1 << 0 << 16 << 16 << false << 0 << true << false << false;
    QTest::newRow("int8 3x3 stride 2") << 16 << 9 << 32 << 3 << 2 << 1 << 8 << 32 << false << 0 << false << true << false;
    // Blocks of 64 channels and filters: AMX tiles where the CPU has them (int8Conv2dUsesTiles).
    QTest::newRow("64-blocks 3x3 pad 1") << 64 << 9 << 128 << 3 << 1 << 1 << 64 << 64 << true << 0 << false << false << false;
    QTest::newRow("64-blocks 3x3, 28 wide") << 128 << 28 << 64 << 3 << 1 << 1 << 64 << 64 << false << 0 << false << false << false;
    QTest::newRow("64-blocks 1x1 stride 2") << 128 << 14 << 64 << 1 << 2 << 0 << 64 << 64 << false << 0 << false << false << false;
    QTest::newRow("64-blocks int8 3x3") << 64 << 7 << 64 << 3 << 1 << 1 << 64 << 64 << false << 0 << false << true << false;
    QTest::newRow("64-blocks in, NCHW out") << 64 << 7 << 96 << 3 << 1 << 1 << 64 << 32 << false << 0 << false << false << true;
    QTest::newRow("64-blocks without AMX") << 64 << 9 << 128 << 3 << 1 << 1 << 64 << 64 << true << 3 << false << false << false;
    QTest::newRow("NCHW 3 channels 7x7 stride 2, 64 filters") << 3 << 23 << 64 << 7 << 2 << 3 << 4 << 64 << true << 0 << true << false << false;
    QTest::newRow("64-blocks 1x1, 7 wide without AMX: a pixel tail") << 64 << 7 << 64 << 1 << 1 << 0 << 64 << 64 << false << 3 << false << false << false;
  }
  void matchesReference() {
    QFETCH(int, channels);
    QFETCH(int, size);
    QFETCH(int, filters);
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, pad);
    QFETCH(int, inputBlock);
    QFETCH(int, filterBlock);
    QFETCH(bool, relu);
    QFETCH(int, cpu);
    QFETCH(bool, nchw);
    QFETCH(bool, signedTypes);
    QFETCH(bool, nchwOutputOnly);
    Int8Conv2dParams params;
    params.conv.channels = channels;
    params.conv.height = params.conv.width = size;
    params.conv.filters = filters;
    params.conv.kernelH = params.conv.kernelW = kernel;
    params.conv.stride = stride;
    params.conv.pad = pad;
    params.inputBlock = inputBlock;
    params.filterBlock = filterBlock;
    params.dataType = params.outputType = signedTypes ? DataType::int8() : DataType::uint8();
    params.dataZeroPoint = signedTypes ? -5 : 3;
    params.outputZeroPoint = signedTypes ? -8 : 120;
    params.relu = relu;
    params.nchwInput = nchw;
    params.nchwOutput = nchw || nchwOutputOnly;
    QVERIFY2(params.validate().empty(), params.validate().c_str());
    Target target = cpu == 0 ? hostTarget() : cpu == 3 ? withoutTiles() : withoutFeatures(false, cpu == 1);
    Workload w = int8Conv2d(params);
    auto schedule = defaultInt8Conv2dSchedule(w, params, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), w.name, target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    bool tiles = int8Conv2dUsesTiles(params, target);
    QCOMPARE(tiles, hasIntegerTiles(target) && inputBlock == 64 && !nchw && cpu != 3);
    QVERIFY(toString(built->lowered.func).find(tiles ? kTileDotAttr : "dot_u8i8(") != std::string::npos);

    const int64_t C = channels, H = size, W = size, K = filters, R = kernel;
    const int64_t OH = params.conv.outHeight(), OW = params.conv.outWidth();
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> byte(signedTypes ? -128 : 0, signedTypes ? 127 : 255), weightByte(-128, 127);
    std::vector<int> x(size_t(C * H * W));  // NCHW, in the data's type
    std::vector<int8_t> w8(size_t(K * C * R * R));
    for (auto& v : x) v = byte(rng);
    for (auto& v : w8) v = int8_t(weightByte(rng));
    std::vector<int32_t> offset(static_cast<size_t>(K)), bias(static_cast<size_t>(K));
    std::vector<float> scale(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      int32_t sum = 0;
      bias[size_t(k)] = int32_t(weightByte(rng)) * 50;
      for (int64_t i = 0; i < C * R * R; ++i) sum += w8[size_t(k * C * R * R + i)];
      offset[size_t(k)] = bias[size_t(k)] - int32_t(params.unsignedDataZeroPoint()) * sum;
      scale[size_t(k)] = 0.0005f + 0.0001f * float(k % 7);
    }

    runtime::DataType byteType = signedTypes ? runtime::DataType::int8() : runtime::DataType::uint8();
    auto data = nchw ? runtime::NDArray::empty({1, C, H, W}, byteType)
                     : runtime::NDArray::empty({1, C / inputBlock, H, W, inputBlock}, byteType);
    auto* dataBytes = static_cast<uint8_t*>(data.data());
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H * W; ++i)
        dataBytes[nchw ? c * H * W + i : ((c / inputBlock) * H * W + i) * inputBlock + c % inputBlock] =
            uint8_t(x[size_t(c * H * W + i)]);
    auto weight = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
    auto packed = packInt8Conv2dWeight(params, w8.data());
    weight.copyFrom(packed.data(), packed.size());
    auto offsetArray = runtime::NDArray::empty({K}, runtime::DataType::int32());
    offsetArray.copyFrom(offset.data(), offset.size() * sizeof(int32_t));
    auto scaleArray = runtime::NDArray::empty({K}, runtime::DataType::float32());
    scaleArray.copyFrom(scale.data(), scale.size() * sizeof(float));
    auto out = nchw || nchwOutputOnly ? runtime::NDArray::empty({1, K, OH, OW}, byteType)
                    : runtime::NDArray::empty({1, K / filterBlock, OH, OW, filterBlock}, byteType);
    built->function(data, weight, offsetArray, scaleArray, out);

    const auto* y = static_cast<const uint8_t*>(out.data());
    int64_t offByOne = 0;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int32_t acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < R; ++s) {
                int64_t iy = oy * stride + r - pad, ix = ox * stride + s - pad;
                bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                int32_t value = inside ? x[size_t((c * H + iy) * W + ix)] : int32_t(params.dataZeroPoint);
                acc += (value - int32_t(params.dataZeroPoint)) * int32_t(w8[size_t(((k * C + c) * R + r) * R + s)]);
              }
          int expected =
              requantized(acc + bias[size_t(k)], scale[size_t(k)], params.outputZeroPoint, relu, signedTypes);
          uint8_t stored = y[nchw || nchwOutputOnly ? (k * OH + oy) * OW + ox
                                  : (((k / filterBlock) * OH + oy) * OW + ox) * filterBlock + k % filterBlock];
          int got = signedTypes ? int(int8_t(stored)) : int(stored);
          // float32 products may round a tie differently; anything more is a wrong sum.
          if (got != expected) {
            QVERIFY2(std::abs(int(got) - int(expected)) == 1,
                     qPrintable(QString("k=%1 y=%2 x=%3: got %4, expected %5").arg(k).arg(oy).arg(ox).arg(got).arg(expected)));
            ++offByOne;
          }
        }
    QVERIFY2(offByOne * 1000 <= K * OH * OW, qPrintable(QString("%1 outputs off by one").arg(offByOne)));
  }

  void rejectsWhatItCannotTake() {
    Int8Conv2dParams params;
    params.conv.channels = 6;
    params.conv.filters = 32;
    QVERIFY(params.validate().find("inputBlock 16 must be a multiple of 4 dividing 6 channels") != std::string::npos);
    params.conv.channels = 16;
    params.conv.filters = 24;
    params.filterBlock = 16;
    QVERIFY(params.validate().find("24 filters do not divide into blocks of 16") != std::string::npos);
    params.conv.filters = 32;
    params.conv.groups = 2;
    QVERIFY(params.validate().find("dense convolutions") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestOpsInt8Conv)
#include "test_ops_int8_conv.moc"
