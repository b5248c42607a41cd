// tensorize: a loop nest matching a declared tensor intrinsic becomes one instruction.
// Each intrinsic's own declaration, tensorized, computes what the declaration says on every
// form codegen emits (VNNI or AVX-512 BF16, the fallback forced by hiding that instruction set
// (AVX-512BW for the integer dot), and plain arithmetic for a CPU without AVX): the integer
// dot over the whole uint8 x int8 range where the fallback's int16 pair sums would saturate,
// the bfloat16 dot bit for bit. An int8 and a bfloat16 matmul with packed weights do too; and
// every way a nest can fail to match is a diagnostic at the tensorize line.
#include <QtTest>

#include <algorithm>
#include <bit>
#include <map>
#include <random>
#include <set>

#include "LoweringWorkloads.h"
#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/IterationOrder.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;

namespace {

// Host: what this CPU has; Fallback: without the intrinsic's own instruction set; Widened:
// without any AVX.
enum class Form { Host, Fallback, Widened };

// The host target with the instruction sets a form must not use hidden.
Target targetFor(Form form, const TensorIntrinsic& intrinsic) {
  Target target = hostTarget();
  auto hide = [&](auto predicate) { std::erase_if(target.features, predicate); };
  if (form == Form::Fallback)
    hide([&](const std::string& f) { return f == intrinsic.instructionSet || f == "avxvnni"; });
  if (form == Form::Widened)
    hide([](const std::string& f) { return f.rfind("avx", 0) == 0 || f == "fma" || f == "f16c"; });
  target.vectorBits = Target::vectorBitsForFeatures(target.features);
  return target;
}

std::vector<int8_t> randomBytes(size_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> bytes(count);
  for (auto& b : bytes) b = int8_t(byte(rng));
  // The extremes, where vpmaddubsw would saturate without the split: 255 * 127 twice.
  for (size_t i = 0; i + 1 < count && i < 8; i += 2) bytes[i] = bytes[i + 1] = int8_t(i % 4 == 0 ? 127 : -128);
  return bytes;
}

// Random bfloat16 bit patterns of normal numbers in +-[2^-8, 2^8) (the instruction flushes
// denormals, the fallback does not), with the floats they stand for.
std::vector<uint16_t> randomBFloat16(size_t count, std::mt19937& rng, std::vector<float>* values) {
  std::uniform_int_distribution<int> exponent(127 - 8, 127 + 7), mantissa(0, 127), sign(0, 1);
  std::vector<uint16_t> bits(count);
  values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    bits[i] = uint16_t(sign(rng) << 15 | exponent(rng) << 7 | mantissa(rng));
    (*values)[i] = std::bit_cast<float>(uint32_t(bits[i]) << 16);
  }
  return bits;
}

// Runs a matmul in testing::int8MatmulWorkload's layout (uint8 A [m, k], int8 W packed in
// [16][4] blocks, int32 C) on random bytes and compares every sum with a plain one.
template <class Function>
void expectExactInt8Matmul(Function& function, int64_t m, int64_t n, int64_t k) {
    std::mt19937 rng(5);
    auto aBytes = randomBytes(size_t(m * k), rng), wBytes = randomBytes(size_t(n * k), rng);
    auto A = runtime::NDArray::empty({m, k}, runtime::DataType::uint8());
    auto W = runtime::NDArray::empty({n / 16, k / 4, 16, 4}, runtime::DataType::int8());
    auto C = runtime::NDArray::empty({m, n}, runtime::DataType::int32());
    A.copyFrom(aBytes.data(), aBytes.size());
    W.copyFrom(wBytes.data(), wBytes.size());
    function(A, W, C);
    const uint8_t* a = A.dataAs<uint8_t>();
    const int8_t* w = W.dataAs<int8_t>();
    const int32_t* c = C.dataAs<int32_t>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += int32_t(a[i * k + p]) * int32_t(w[((j / 16 * (k / 4) + p / 4) * 16 + j % 16) * 4 + p % 4]);
        QCOMPARE(c[i * n + j], sum);
      }
}

Expected<Schedule> scheduleFromText(const std::vector<te::Tensor>& outputs, const std::string& text) {
  auto trace = parseTraceText(text);
  if (!trace) return trace.error();
  return Schedule::replay(outputs, *trace);
}

}  // namespace

class TestTensorize : public QObject {
  Q_OBJECT
private slots:
  void declarationTensorizedMatchesPlainArithmetic_data() {
    QTest::addColumn<QString>("intrinsic");
    QTest::addColumn<int>("form");
    for (auto& intrinsic : tensorIntrinsics())
      if (!intrinsic.wholeReduction)  // tile_u8i8: tileMatmulIsExact
      for (auto [form, name] : {std::pair{Form::Host, std::string("host")},
                                {Form::Fallback, "no " + intrinsic.instructionSet},
                                {Form::Widened, std::string("no AVX")}})
        QTest::newRow((intrinsic.name + " " + name).c_str()) << QString::fromStdString(intrinsic.name) << int(form);
  }
  void declarationTensorizedMatchesPlainArithmetic() {
    QFETCH(QString, intrinsic);
    QFETCH(int, form);
    const TensorIntrinsic* declared = findTensorIntrinsic(intrinsic.toStdString());
    QVERIFY(declared);
    auto tensors = declared->declaration();
    Schedule schedule({tensors[2]});
    Status tensorized = schedule.tensorize("out", "i", declared->name);
    QVERIFY2(tensorized.ok(), tensorized.ok() ? "" : tensorized.error().toString().c_str());
    Target target = targetFor(Form(form), *declared);
    auto built = build(schedule, tensors, "dot", target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    bool integer = declared->instruction == Intrinsic::DotU8I8;
    std::string call = std::string(intrinsicName(declared->instruction)) + "(";
    QVERIFY2(toString(built->lowered.func).find(call) != std::string::npos, toString(built->lowered.func).c_str());

    // The instruction codegen chose is the one the target's features allow.
    std::string assembly = emitAssembly({built->lowered.func}, target);
    const int lanes = int(declared->lanes);
    if (integer) {
      bool vnni = assembly.find("vpdpbusd") != std::string::npos;
      bool byteMultiply = assembly.find("vpmaddubsw") != std::string::npos;
      std::string expected = integerDotForm(target, lanes);
      if (Form(form) == Form::Fallback) QVERIFY(expected != "vnni");
      if (Form(form) == Form::Widened) QCOMPARE(expected, std::string("generic"));
      QCOMPARE(vnni, expected == "vnni");
      QCOMPARE(byteMultiply, expected == "avx512bw" || expected == "avx2");
    } else {
      std::string expected = bfloat16DotForm(target, lanes);
      if (Form(form) != Form::Host) QCOMPARE(expected, std::string("generic"));
      QCOMPARE(assembly.find("vdpbf16ps") != std::string::npos, expected == "avx512bf16");
    }

    std::mt19937 rng(11);
    const int64_t n = declared->lanes, r = declared->reduction;
    if (integer) {
      auto data = runtime::NDArray::empty({r}, runtime::DataType::uint8());
      auto weight = runtime::NDArray::empty({n, r}, runtime::DataType::int8());
      auto out = runtime::NDArray::empty({n}, runtime::DataType::int32());
      for (int trial = 0; trial < 20; ++trial) {
        auto dataBytes = randomBytes(size_t(r), rng), weightBytes = randomBytes(size_t(n * r), rng);
        data.copyFrom(dataBytes.data(), dataBytes.size());
        weight.copyFrom(weightBytes.data(), weightBytes.size());
        built->function(data, weight, out);
        const uint8_t* a = data.dataAs<uint8_t>();
        const int8_t* b = weight.dataAs<int8_t>();
        const int32_t* c = out.dataAs<int32_t>();
        for (int64_t i = 0; i < n; ++i) {
          int32_t sum = 0;
          for (int64_t k = 0; k < r; ++k) sum += int32_t(a[k]) * int32_t(b[i * r + k]);
          QCOMPARE(c[i], sum);
        }
      }
      return;
    }
    // Each bfloat16 product is exact in float32 and the first is added to zero, so every form
    // rounds once, at the second addition: the results are equal bit for bit.
    auto data = runtime::NDArray::empty({r}, runtime::DataType::bfloat16());
    auto weight = runtime::NDArray::empty({n, r}, runtime::DataType::bfloat16());
    auto out = runtime::NDArray::empty({n}, runtime::DataType::float32());
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> a, b;
      auto dataBits = randomBFloat16(size_t(r), rng, &a), weightBits = randomBFloat16(size_t(n * r), rng, &b);
      data.copyFrom(dataBits.data(), dataBits.size() * 2);
      weight.copyFrom(weightBits.data(), weightBits.size() * 2);
      built->function(data, weight, out);
      const float* c = out.dataAs<float>();
      for (int64_t i = 0; i < n; ++i) {
        float sum = 0;
        for (int64_t k = r - 1; k >= 0; --k) sum += a[size_t(k)] * b[size_t(i * r + k)];
        QCOMPARE(std::bit_cast<uint32_t>(c[i]), std::bit_cast<uint32_t>(sum));
      }
    }
  }

  void int8MatmulWithPackedWeightsIsExact() {
    const int64_t m = 5, n = 48, k = 36;
    auto workload = testing::int8MatmulWorkload(m, n, k);
    auto schedule = scheduleFromText(workload.outputs,
                                     "jo, ji = split(C, j, factor=16)\n"
                                     "ko, ki = split(C, k, factor=4)\n"
                                     "reorder(C, jo, i, ko, ji, ki)\n"
                                     "parallel(C, jo)\n"
                                     "tensorize(C, ji, dot_16x4_u8i8)\n");
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, workload.args(), "int8_matmul");
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());

    expectExactInt8Matmul(built->function, m, n, k);
  }

  // tile_u8i8 over a packed int8 matmul: AMX tiles where the CPU has them (tdpbusd in the
  // assembly), the loops as written where it does not, and the exact integer sums either way;
  // rows beyond one tile (40 = 3 groups), a reduction beyond one tile row (256 = 4 x 64), and
  // columns that are not a multiple of the two tiles a pass takes (48 = 3 x 16).
  void tileMatmulIsExact_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("hideTiles");
    QTest::newRow("5x48x36 host") << 5 << 48 << 36 << false;
    QTest::newRow("40x32x256 host") << 40 << 32 << 256 << false;
    QTest::newRow("40x32x256 without AMX") << 40 << 32 << 256 << true;
    QTest::newRow("16x16x4 host") << 16 << 16 << 4 << false;
  }
  void tileMatmulIsExact() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(bool, hideTiles);
    auto workload = testing::int8MatmulWorkload(m, n, k);
    std::string text = "jo, ji = split(C, j, factor=16)\n"
                       "ko, ki = split(C, k, factor=4)\n";
    text += k > 64 ? "kc, kg = split(C, ko, factor=16)\nreorder(C, jo, i, ji, kc, kg, ki)\n"
                   : "reorder(C, jo, i, ji, ko, ki)\n";
    text += "tensorize(C, i, tile_u8i8)\n";
    auto schedule = scheduleFromText(workload.outputs, text);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    Target target = hostTarget();
    if (hideTiles) std::erase_if(target.features, [](const std::string& f) { return f.rfind("amx", 0) == 0; });
    auto built = build(*schedule, workload.args(), "int8_tile_matmul", target);
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    QVERIFY(toString(built->lowered.func).find(kTileDotAttr) != std::string::npos);
    std::string assembly = emitAssembly({built->lowered.func}, target);
    QCOMPARE(assembly.find("tdpbusd") != std::string::npos, hasIntegerTiles(target));
    if (hideTiles) QVERIFY(!hasIntegerTiles(target));

    expectExactInt8Matmul(built->function, m, n, k);
  }

  // A nest tile_u8i8 cannot take is refused at the tensorize line, saying what differs.
  void tileMismatchesAreDiagnosed_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<QString>("expected");
    QTest::newRow("8 columns") << "jo, ji = split(C, j, factor=8)\nko, ki = split(C, k, factor=4)\n"
                                  "reorder(C, jo, i, ji, ko, ki)\ntensorize(C, i, tile_u8i8)\n"
                               << "runs 8 times, not a multiple of 16";
    QTest::newRow("reduction not split by 4") << "jo, ji = split(C, j, factor=16)\nreorder(C, jo, i, ji, k)\n"
                                                 "tensorize(C, i, tile_u8i8)\n"
                                              << "not a sum of constant multiples of the nest's loop variables";
    QTest::newRow("on the columns loop") << "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n"
                                            "reorder(C, jo, i, ji, ko, ki)\ntensorize(C, ji, tile_u8i8)\n"
                                         << "must be the rows loop of a tile";
    QTest::newRow("bytes not innermost") << "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n"
                                            "reorder(C, jo, i, ji, ki, ko)\ntensorize(C, i, tile_u8i8)\n"
                                         << "is not 4 consecutive bytes of both operands";
  }
  void tileMismatchesAreDiagnosed() {
    QFETCH(QString, schedule);
    QFETCH(QString, expected);
    auto workload = testing::int8MatmulWorkload(4, 32, 16);
    auto scheduled = scheduleFromText(workload.outputs, schedule.toStdString());
    std::string message;
    if (!scheduled.ok()) {
      message = scheduled.error().toString();
    } else {
      auto built = build(*scheduled, workload.args(), "int8_tile_matmul");
      QVERIFY(!built.ok());
      message = built.error().toString();
    }
    QVERIFY2(message.find(expected.toStdString()) != std::string::npos, message.c_str());
  }

  // Every bfloat16 form agrees with a float32 sum of the same products to float32 rounding.
  void bfloat16MatmulWithPackedWeightsMatchesFloatSums_data() {
    QTest::addColumn<int>("form");
    QTest::newRow("host") << int(Form::Host);
    QTest::newRow("no avx512bf16") << int(Form::Fallback);
    QTest::newRow("no AVX") << int(Form::Widened);
  }
  void bfloat16MatmulWithPackedWeightsMatchesFloatSums() {
    QFETCH(int, form);
    const int64_t m = 5, n = 48, k = 36;
    auto workload = testing::bfloat16MatmulWorkload(m, n, k);
    auto schedule = scheduleFromText(workload.outputs,
                                     "jo, ji = split(C, j, factor=16)\n"
                                     "ko, ki = split(C, k, factor=2)\n"
                                     "reorder(C, jo, i, ko, ji, ki)\n"
                                     "parallel(C, jo)\n"
                                     "tensorize(C, ji, dot_16x2_bf16)\n");
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    auto built = build(*schedule, workload.args(), "bf16_matmul", targetFor(Form(form), *findTensorIntrinsic("dot_16x2_bf16")));
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());

    std::mt19937 rng(5);
    std::vector<float> a, w;
    auto aBits = randomBFloat16(size_t(m * k), rng, &a), wBits = randomBFloat16(size_t(n * k), rng, &w);
    auto A = runtime::NDArray::empty({m, k}, runtime::DataType::bfloat16());
    auto W = runtime::NDArray::empty({n / 16, k / 2, 16, 2}, runtime::DataType::bfloat16());
    auto C = runtime::NDArray::empty({m, n}, runtime::DataType::float32());
    A.copyFrom(aBits.data(), aBits.size() * 2);
    W.copyFrom(wBits.data(), wBits.size() * 2);
    built->function(A, W, C);
    const float* c = C.dataAs<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          double product = double(a[size_t(i * k + p)]) * w[size_t(((j / 16 * (k / 2) + p / 2) * 16 + j % 16) * 2 + p % 2)];
          sum += product;
          magnitude += std::abs(product);
        }
        // k float32 additions, each off by at most half an ulp of the running magnitude.
        double bound = double(k) * magnitude * 0x1p-24;
        QVERIFY2(std::abs(double(c[i * n + j]) - sum) <= bound,
                 (std::to_string(c[i * n + j]) + " vs " + std::to_string(sum)).c_str());
      }
  }

  // Each mistake names the tensorize line, the loop, and what differs.
  void mismatchesAreDiagnosticsAtTheTensorizeLine_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("line");
    const QString split = "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n";
    QTest::newRow("unknown intrinsic") << "tensorize(C, j, vpdpbusd)\n"
                                       << "'vpdpbusd' is not a tensor intrinsic" << 1;
    QTest::newRow("not innermost") << split + "tensorize(C, jo, dot_16x4_u8i8)\n"
                                   << "must be the outer of its two innermost loops" << 3;
    QTest::newRow("two data loops") << split + "reorder(C, ko, ki, i, jo, ji)\ntensorize(C, jo, dot_16x4_u8i8)\n"
                                    << "one data-parallel loop and one reduction loop" << 4;
    QTest::newRow("eight outputs for sixteen")
        << "jo, ji = split(C, j, factor=8)\nko, ki = split(C, k, factor=4)\nreorder(C, i, jo, ko, ji, ki)\n"
           "tensorize(C, ji, dot_16x4_u8i8)\n"
        << "the output loop 'ji' runs 8 times; dot_16x4_u8i8 computes 16 outputs" << 4;
    QTest::newRow("reduction of two")
        << "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=2)\nreorder(C, i, jo, ko, ji, ki)\n"
           "tensorize(C, ji, dot_16x4_u8i8)\n"
        << "the reduction loop 'ki' runs 2 times" << 4;
    QTest::newRow("vectorized inside")
        << split + "reorder(C, i, jo, ko, ji, ki)\nvectorize(C, ki)\ntensorize(C, ji, dot_16x4_u8i8)\n"
        << "is a reduction loop" << 4;
  }
  void mismatchesAreDiagnosticsAtTheTensorizeLine() {
    QFETCH(QString, schedule);
    QFETCH(QString, expected);
    QFETCH(int, line);
    auto workload = testing::int8MatmulWorkload(2, 32, 8);
    auto replayed = scheduleFromText(workload.outputs, schedule.toStdString());
    Diagnostic error;
    if (replayed) {
      auto lowered = lower(*replayed, workload.args(), "f");
      QVERIFY2(!lowered.ok(), "the mismatch lowered");
      error = lowered.error();
    } else {
      error = replayed.error();
    }
    QVERIFY2(QString::fromStdString(error.message).contains(expected), error.toString().c_str());
    QCOMPARE(error.line, line);
  }

  void bfloat16IntrinsicNamesItsShape() {
    auto workload = testing::bfloat16MatmulWorkload(2, 32, 8);
    auto replayed = scheduleFromText(workload.outputs,
                                     "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n"
                                     "reorder(C, i, jo, ko, ji, ki)\ntensorize(C, ji, dot_16x2_bf16)\n");
    QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().toString().c_str());
    auto lowered = lower(*replayed, workload.args(), "f");
    QVERIFY(!lowered.ok());
    QVERIFY2(QString::fromStdString(lowered.error().message).contains("the reduction loop 'ki' runs 4 times; dot_16x2_bf16 adds 2"),
             lowered.error().toString().c_str());
    QCOMPARE(lowered.error().line, 4);
    // An int8 matmul is not a float32 sum.
    auto integer = testing::int8MatmulWorkload(2, 32, 8);
    auto wrongType = scheduleFromText(integer.outputs, "tensorize(C, j, dot_16x2_bf16)\n");
    QVERIFY(!wrongType.ok());
    QVERIFY2(QString::fromStdString(wrongType.error().message).contains("is not a sum into float32"),
             wrongType.error().toString().c_str());
  }

  void floatMatmulIsNotAnIntegerSum() {
    auto workload = testing::matmulWorkload(4, 16, 4);
    auto replayed = scheduleFromText(workload.outputs, "tensorize(C, j, dot_16x4_u8i8)\n");
    QVERIFY(!replayed.ok());
    QVERIFY2(QString::fromStdString(replayed.error().message).contains("is not a sum into int32"),
             replayed.error().toString().c_str());
  }

  // Weights in plain [k, n] order: the 64 bytes one instruction reads are not one block.
  void unpackedWeightIsNamed() {
    te::Tensor A = te::placeholder({Expr(int64_t(2)), Expr(int64_t(8))}, DataType::uint8(), "A");
    te::Tensor B = te::placeholder({Expr(int64_t(8)), Expr(int64_t(16))}, DataType::int8(), "B");
    IterVar r = te::reduceAxis(Expr(int64_t(8)), "k");
    te::Tensor C = te::compute(
        {Expr(int64_t(2)), Expr(int64_t(16))},
        [&](Var i, Var j) { return te::sum(cast(DataType::int32(), A(i, r)) * cast(DataType::int32(), B(r, j)), {r}); },
        "C");
    auto replayed = scheduleFromText({C}, "ko, ki = split(C, k, factor=4)\nreorder(C, i, ko, j, ki)\n"
                                          "tensorize(C, j, dot_16x4_u8i8)\n");
    QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().toString().c_str());
    auto lowered = lower(*replayed, {A, B, C}, "f");
    QVERIFY(!lowered.ok());
    QVERIFY2(QString::fromStdString(lowered.error().message).contains("B[") &&
                 QString::fromStdString(lowered.error().message).contains("is not laid out as [16 outputs][4"),
             lowered.error().toString().c_str());
    QCOMPARE(lowered.error().line, 3);
  }

  // The Studio's iteration-order view: each dot_u8i8 stores 16 outputs as one instruction.
  void iterationOrderCountsTheIntrinsicAsOneInstruction() {
    auto workload = testing::int8MatmulWorkload(2, 32, 8);
    auto schedule = scheduleFromText(workload.outputs,
                                     "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n"
                                     "reorder(C, i, jo, ko, ji, ki)\ntensorize(C, ji, dot_16x4_u8i8)\n");
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, workload.args(), "f");
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
    auto order = iterationOrder(lowered->func);
    QVERIFY2(order.ok(), order.ok() ? "" : order.error().toString().c_str());
    QCOMPARE(order->cells.size(), size_t(2 * 32));
    QCOMPARE(order->widestVector, 16);
    // Row i's two blocks of 16, each the last of its two reduction steps, one instruction each.
    std::set<int64_t> instructions;
    for (auto& cell : order->cells) instructions.insert(cell.vectorInstruction);
    QCOMPARE(instructions.size(), size_t(4));
  }

  // A tile_u8i8 nest is one instruction too: each jo's 2 x 16 outputs, whatever loops remain.
  void iterationOrderCountsTheTileAsOneInstruction() {
    auto workload = testing::int8MatmulWorkload(2, 32, 8);
    auto schedule = scheduleFromText(workload.outputs,
                                     "jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=4)\n"
                                     "reorder(C, jo, i, ji, ko, ki)\ntensorize(C, i, tile_u8i8)\n");
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, workload.args(), "f");
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
    auto order = iterationOrder(lowered->func);
    QVERIFY2(order.ok(), order.ok() ? "" : order.error().toString().c_str());
    QCOMPARE(order->cells.size(), size_t(2 * 32));
    std::map<int64_t, int> outputsPerInstruction;
    for (auto& cell : order->cells) ++outputsPerInstruction[cell.vectorInstruction];
    QCOMPARE(outputsPerInstruction.size(), size_t(2));
    for (auto [instruction, outputs] : outputsPerInstruction) QCOMPARE(outputs, 2 * 16);
  }

  void traceTextRoundTrips() {
    auto trace = parseTraceText("tensorize(C, ji, dot_16x4_u8i8)\n");
    QVERIFY(trace.ok());
    QCOMPARE(trace->primitives.size(), size_t(1));
    QCOMPARE(trace->primitives[0].kind, PrimitiveKind::Tensorize);
    QCOMPARE(printTraceText(*trace), std::string("tensorize(C, ji, dot_16x4_u8i8)\n"));
  }
};

QTEST_GUILESS_MAIN(TestTensorize)
#include "test_tensorize.moc"
