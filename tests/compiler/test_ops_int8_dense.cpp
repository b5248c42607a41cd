// The int8 VNNI dense layer against a plain C++ reference of the same quantized arithmetic:
// uint8 and int8 data, byte and float32 outputs, depths not a multiple of 4, columns not a
// multiple of the block (and fewer than a block), leading batch axes, a fused Relu, data
// quantized at run time, and the same kernel on a CPU without VNNI (its AVX-512BW form)
// and without AVX.
#include <QtTest>

#include <cmath>
#include <random>

#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Int8Dense.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;

namespace {

Target withoutFeatures(bool avx) {
  Target target = hostTarget();
  std::erase_if(target.features, [&](const std::string& f) {
    if (f == "avx512vnni" || f == "avxvnni") return true;
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

}  // namespace

class TestOpsInt8Dense : public QObject {
  Q_OBJECT
private slots:
  void matchesReference_data() {
    QTest::addColumn<QList<int>>("shape");  // the data's, depth last
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("block");
    QTest::addColumn<QString>("types");  // data -> output
    QTest::addColumn<bool>("relu");
    QTest::addColumn<int>("cpu");  // 0 host, 1 without VNNI, 2 without AVX, 3 without AMX
    QTest::newRow("one row, float logits") << QList<int>{1, 512} << 1000 << 32 << "uint8 float32" << false << 0;
    QTest::newRow("rows in tiles, uint8") << QList<int>{24, 64} << 64 << 32 << "uint8 uint8" << false << 0;
    QTest::newRow("int8 data and output, relu") << QList<int>{12, 48} << 48 << 16 << "int8 int8" << true << 0;
    QTest::newRow("depth 30: padded quads") << QList<int>{5, 30} << 20 << 16 << "uint8 float32" << true << 0;
    QTest::newRow("batch axes") << QList<int>{2, 3, 7, 32} << 40 << 32 << "int8 float32" << false << 0;
    QTest::newRow("without VNNI") << QList<int>{8, 64} << 64 << 32 << "uint8 uint8" << true << 1;
    QTest::newRow("10 classes: fewer columns than a block") << QList<int>{3, 64} << 10 << 16 << "uint8 uint8" << false << 0;
    QTest::newRow("without AVX") << QList<int>{6, 36} << 24 << 16 << "int8 float32" << false << 2;
    // K a multiple of 64 and at least 8 rows per tile: AMX tiles where the CPU has them.
    QTest::newRow("tiles: 2 x 24 rows, K 192") << QList<int>{2, 24, 192} << 64 << 32 << "uint8 uint8" << true << 0;
    QTest::newRow("tiles: int8 data, float out") << QList<int>{40, 128} << 48 << 16 << "int8 float32" << false << 0;
    QTest::newRow("tiles hidden: K 192") << QList<int>{2, 24, 192} << 64 << 32 << "uint8 uint8" << true << 3;
  }
  void matchesReference() {
    QFETCH(QList<int>, shape);
    QFETCH(int, columns);
    QFETCH(int, block);
    QFETCH(QString, types);
    QFETCH(bool, relu);
    QFETCH(int, cpu);
    Int8DenseParams params;
    for (int extent : shape) params.dataShape.push_back(extent);
    params.columns = columns;
    params.columnBlock = block;
    params.dataType = *DataType::parse(types.split(' ')[0].toStdString());
    params.outputType = *DataType::parse(types.split(' ')[1].toStdString());
    const bool signedData = params.dataType == DataType::int8();
    const bool floatOutput = params.outputType == DataType::float32();
    params.dataZeroPoint = signedData ? -5 : 3;
    params.outputZeroPoint = floatOutput ? 0 : params.outputType == DataType::int8() ? -8 : 120;
    params.relu = relu;
    QVERIFY2(params.validate().empty(), params.validate().c_str());
    Target target = cpu == 0 ? hostTarget() : cpu == 3 ? withoutTiles() : withoutFeatures(cpu == 1);
    Workload w = int8Dense(params);
    auto schedule = defaultInt8DenseSchedule(w, params, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), w.name, target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    bool tiles = int8DenseUsesTiles(params, target);
    QCOMPARE(tiles, hasIntegerTiles(target) && shape.back() % 64 == 0 && columns >= block && shape[shape.size() - 2] >= 8);
    bool tensorized = toString(built->lowered.func).find(tiles ? kTileDotAttr : "dot_u8i8(") != std::string::npos;
    QCOMPARE(tensorized, columns >= block);  // fewer columns than a block: plain multiply-adds

    const int64_t M = params.rows(), K = params.depth(), N = columns;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> byte(signedData ? -128 : 0, signedData ? 127 : 255), weightByte(-128, 127);
    std::vector<int> x(size_t(M * K));
    std::vector<int8_t> w8(size_t(N * K));  // [N, K], as a Gemm with transB holds it
    for (auto& v : x) v = byte(rng);
    for (auto& v : w8) v = int8_t(weightByte(rng));
    std::vector<int32_t> offset(static_cast<size_t>(N)), bias(static_cast<size_t>(N));
    std::vector<float> scale(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      int32_t sum = 0;
      bias[size_t(n)] = int32_t(weightByte(rng)) * 50;
      for (int64_t k = 0; k < K; ++k) sum += w8[size_t(n * K + k)];
      offset[size_t(n)] = bias[size_t(n)] - int32_t(params.unsignedDataZeroPoint()) * sum;
      scale[size_t(n)] = 0.0005f + 0.0001f * float(n % 7);
    }
    runtime::DataType byteType = signedData ? runtime::DataType::int8() : runtime::DataType::uint8();
    auto data = runtime::NDArray::empty(params.dataShape, byteType);
    for (int64_t i = 0; i < M * K; ++i) static_cast<uint8_t*>(data.data())[i] = uint8_t(x[size_t(i)]);
    auto weight = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
    auto packed = packInt8DenseWeight(params, w8.data(), true);
    weight.copyFrom(packed.data(), packed.size());
    auto offsetArray = runtime::NDArray::empty({N}, runtime::DataType::int32());
    offsetArray.copyFrom(offset.data(), offset.size() * sizeof(int32_t));
    auto scaleArray = runtime::NDArray::empty({N}, runtime::DataType::float32());
    scaleArray.copyFrom(scale.data(), scale.size() * sizeof(float));
    runtime::DataType outType = floatOutput ? runtime::DataType::float32()
                                : params.outputType == DataType::int8() ? runtime::DataType::int8()
                                                                         : runtime::DataType::uint8();
    auto out = runtime::NDArray::empty(params.outputShape(), outType);
    built->function(data, weight, offsetArray, scaleArray, out);

    int64_t offByOne = 0;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (x[size_t(m * K + k)] - int32_t(params.dataZeroPoint)) * int32_t(w8[size_t(n * K + k)]);
        acc += bias[size_t(n)];
        QString where = QString("row %1, column %2").arg(m).arg(n);
        if (floatOutput) {
          float expected = float(acc) * scale[size_t(n)];
          if (relu) expected = std::max(expected, 0.0f);
          float got = out.dataAs<float>()[m * N + n];
          QVERIFY2(got == expected, qPrintable(where + QString(": got %1, expected %2").arg(got).arg(expected)));
          continue;
        }
        bool signedOutput = params.outputType == DataType::int8();
        float low = signedOutput ? -128.0f : 0.0f, high = signedOutput ? 127.0f : 255.0f;
        float value = std::nearbyint(float(acc) * scale[size_t(n)]) + float(params.outputZeroPoint);
        int expected = int(std::min(high, std::max(relu ? float(params.outputZeroPoint) : low, value)));
        uint8_t stored = static_cast<const uint8_t*>(out.data())[m * N + n];
        int got = signedOutput ? int(int8_t(stored)) : int(stored);
        if (got != expected) {
          // float32 products may round a tie differently; anything more is a wrong sum.
          QVERIFY2(std::abs(got - expected) == 1, qPrintable(where + QString(": got %1, expected %2").arg(got).arg(expected)));
          ++offByOne;
        }
      }
    QVERIFY2(offByOne * 1000 <= M * N, qPrintable(QString("%1 outputs off by one").arg(offByOne)));
  }

  // Data quantized at run time (DynamicQuantizeLinear's scale and zero point as inputs), as
  // a dynamically quantized BERT's dense layers read it: float output with the float bias.
  void dynamicDataMatchesReference() {
    Int8DenseParams params;
    params.dataShape = {2, 16, 64};
    params.columns = 96;
    params.outputType = DataType::float32();
    params.dynamicData = true;
    QVERIFY2(params.validate().empty(), params.validate().c_str());
    Target target = hostTarget();
    Workload w = int8Dense(params);
    auto schedule = defaultInt8DenseSchedule(w, params, target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, w.args(), w.name, target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());

    const int64_t M = params.rows(), K = params.depth(), N = params.columns;
    std::mt19937 rng(13);
    std::uniform_int_distribution<int> byte(0, 255), weightByte(-127, 127);
    std::vector<uint8_t> x(size_t(M * K));
    std::vector<int8_t> w8(size_t(K * N));  // [K, N], as a MatMul holds it
    for (auto& v : x) v = uint8_t(byte(rng));
    for (auto& v : w8) v = int8_t(weightByte(rng));
    const uint8_t zero = 117;
    const float dataScale = 0.021f;
    std::vector<int32_t> sums(static_cast<size_t>(N), 0);
    std::vector<float> weightScale(static_cast<size_t>(N)), bias(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = 0; k < K; ++k) sums[size_t(n)] += w8[size_t(k * N + n)];
      weightScale[size_t(n)] = 0.003f + 0.0005f * float(n % 5);
      bias[size_t(n)] = 0.25f * float(n % 9) - 1.0f;
    }
    auto data = runtime::NDArray::empty(params.dataShape, runtime::DataType::uint8());
    data.copyFrom(x.data(), x.size());
    auto weight = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
    auto packed = packInt8DenseWeight(params, w8.data(), false);
    weight.copyFrom(packed.data(), packed.size());
    auto sumArray = runtime::NDArray::empty({N}, runtime::DataType::int32());
    sumArray.copyFrom(sums.data(), sums.size() * sizeof(int32_t));
    auto scaleArray = runtime::NDArray::empty({}, runtime::DataType::float32());
    scaleArray.copyFrom(&dataScale, sizeof(float));
    auto zeroArray = runtime::NDArray::empty({}, runtime::DataType::uint8());
    zeroArray.copyFrom(&zero, 1);
    auto weightScaleArray = runtime::NDArray::empty({N}, runtime::DataType::float32());
    weightScaleArray.copyFrom(weightScale.data(), weightScale.size() * sizeof(float));
    auto biasArray = runtime::NDArray::empty({N}, runtime::DataType::float32());
    biasArray.copyFrom(bias.data(), bias.size() * sizeof(float));
    auto out = runtime::NDArray::empty(params.outputShape(), runtime::DataType::float32());
    built->function(data, weight, sumArray, scaleArray, zeroArray, weightScaleArray, biasArray, out);

    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int32_t acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += (int32_t(x[size_t(m * K + k)]) - zero) * w8[size_t(k * N + n)];
        float expected = float(acc) * (dataScale * weightScale[size_t(n)]) + bias[size_t(n)];
        float got = out.dataAs<float>()[m * N + n];
        // Exact but for a fused multiply-add's rounding.
        QVERIFY2(std::fabs(got - expected) <= 1e-5f * std::max(1.0f, std::fabs(expected)),
                 qPrintable(QString("row %1, column %2: got %3, expected %4").arg(m).arg(n).arg(got).arg(expected)));
      }
  }

  void rejectsWhatItCannotTake() {
    Int8DenseParams params;
    params.dataShape = {64};
    params.columns = 8;
    QVERIFY(params.validate().find("row axis") != std::string::npos);
    params.dataShape = {2, 64};
    params.columnBlock = 8;
    QVERIFY(params.validate().find("16 or 32") != std::string::npos);
    params.columnBlock = 16;
    params.outputType = DataType::int32();
    QVERIFY(params.validate().find("uint8, int8 or float32") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestOpsInt8Dense)
#include "test_ops_int8_dense.moc"
