// The tessel command-line tool as a user meets it: help, usage errors, lowering, schedule files, benchmarks.
#include <QtTest>
#include <QTemporaryDir>
#include <QJsonObject>
#include <QJsonDocument>
#include <QJsonArray>

#include <cmath>

#include "CliTestSupport.h"

#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TensorIntrinsic.h"

namespace {

using testing::describe;
using testing::keyValues;
using testing::Run;
using testing::kTessel;
using testing::runTessel;


// A positive finite number, or -1 when the text is not one.
double positiveNumber(const QString& text) {
  bool ok = false;
  double value = text.toDouble(&ok);
  return ok && value > 0 && std::isfinite(value) ? value : -1;
}

QString writeFile(const QTemporaryDir& directory, const QString& name, const QByteArray& contents) {
  QString path = directory.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  file.write(contents);
  return path;
}

// A matmul schedule written by hand: rows split in blocks of 16 that run in parallel, no
// register tile (the default caches C in a local tile), the packing loop vectorized.
const QByteArray kRowBlockSchedule =
    "# rows in parallel blocks of 16\n"
    "io, ii = split(C, i, factor=16)\n"
    "parallel(C, io)\n"
    "vectorize(B.packed, ji)\n";

const QStringList kSmallMatmul = {"lower", "matmul", "--m", "64", "--n", "64", "--k", "32"};

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { QVERIFY2(QFileInfo(kTessel).isExecutable(), qPrintable(kTessel + " is not built")); }

  void helpListsEveryFlag_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("tessel --help") << QStringList{"--help"} << QStringList{"lower", "bench", "demo"};
    QTest::newRow("tessel help") << QStringList{"help"} << QStringList{"lower", "bench", "demo"};
    QTest::newRow("lower") << QStringList{"lower", "--help"}
                           << QStringList{"--m", "--n", "--k", "--schedule", "--all-steps", "--emit", "--help"};
    QTest::newRow("lower matmul") << QStringList{"lower", "matmul", "--help"}
                                  << QStringList{"--m", "--n", "--k", "--schedule", "--all-steps"};
    QTest::newRow("lower conv2d") << QStringList{"lower", "conv2d", "--help"}
                                  << QStringList{"--n", "--c", "--h", "--w", "--k", "--r", "--s", "--stride",
                                                 "--pad", "--schedule", "--all-steps"};
    QTest::newRow("bench") << QStringList{"bench", "--help"}
                           << QStringList{"--m", "--n", "--k", "--threads", "--schedule", "--seconds", "gflops=",
                                          "peak_gflops=", "fraction_of_peak="};
    QTest::newRow("bench conv2d") << QStringList{"bench", "conv2d", "-h"}
                                  << QStringList{"--c", "--stride", "--pad", "--threads", "--seconds"};
    QTest::newRow("demo") << QStringList{"demo", "--help"} << QStringList{"--threads", "--help"};
  }
  void helpListsEveryFlag() {
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, mentions);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.startsWith("usage: tessel"), qPrintable(describe(arguments, run)));
    for (const QString& mention : mentions)
      QVERIFY2(run.out.contains(mention), qPrintable(mention + " missing from\n" + describe(arguments, run)));
  }

  void noArgumentsPrintsUsageAndFails() {
    Run run = runTessel({});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.out.startsWith("usage: tessel COMMAND"), qPrintable(describe({}, run)));
  }

  void commandWithoutOperatorPrintsUsageAndFails_data() {
    QTest::addColumn<QString>("command");
    QTest::newRow("lower") << "lower";
    QTest::newRow("bench") << "bench";
  }
  void commandWithoutOperatorPrintsUsageAndFails() {
    QFETCH(QString, command);
    Run run = runTessel({command});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.out.startsWith("usage: tessel " + command), qPrintable(describe({command}, run)));
  }

  // Every mistake exits 2 with a message naming what was wrong, and does no work.
  void usageErrorsNameTheProblem_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("messageMentions");
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << QStringList{"unknown command", "frobnicate"};
    QTest::newRow("unknown operator") << QStringList{"lower", "softmax"} << QStringList{"softmax", "matmul", "conv2d"};
    QTest::newRow("unknown flag, lower") << QStringList{"lower", "matmul", "--tile", "8"} << QStringList{"--tile"};
    QTest::newRow("unknown flag, bench") << QStringList{"bench", "matmul", "--warmup=3"} << QStringList{"--warmup"};
    QTest::newRow("unknown flag, demo") << QStringList{"demo", "--fast"} << QStringList{"--fast"};
    QTest::newRow("conv2d flag on matmul") << QStringList{"lower", "matmul", "--stride", "2"}
                                           << QStringList{"--stride"};
    QTest::newRow("flag without its value") << QStringList{"lower", "matmul", "--n", "8", "--m"}
                                            << QStringList{"--m", "value"};
    QTest::newRow("schedule without its value") << QStringList{"bench", "matmul", "--schedule"}
                                                << QStringList{"--schedule", "value"};
    QTest::newRow("value on a switch") << QStringList{"lower", "matmul", "--all-steps=yes"}
                                       << QStringList{"--all-steps"};
    QTest::newRow("flag given twice") << QStringList{"lower", "matmul", "--m", "8", "--m", "16"}
                                      << QStringList{"--m", "twice"};
    QTest::newRow("non-integer size") << QStringList{"lower", "matmul", "--m", "sixty-four"}
                                      << QStringList{"--m", "integer", "sixty-four"};
    QTest::newRow("fractional size") << QStringList{"lower", "matmul", "--k", "2.5"} << QStringList{"--k", "2.5"};
    QTest::newRow("zero size") << QStringList{"lower", "matmul", "--n", "0"} << QStringList{"--n", "at least 1"};
    QTest::newRow("negative size") << QStringList{"bench", "matmul", "--m", "-4"} << QStringList{"--m", "-4"};
    QTest::newRow("negative padding") << QStringList{"lower", "conv2d", "--pad", "-1"} << QStringList{"--pad", "-1"};
    QTest::newRow("kernel larger than input")
        << QStringList{"lower", "conv2d", "--h", "2", "--w", "2", "--r", "5", "--s", "5", "--pad", "0"}
        << QStringList{"kernel"};
    QTest::newRow("unknown emit kind") << QStringList{"lower", "matmul", "--emit", "ptx"}
                                       << QStringList{"--emit", "ptx"};
    QTest::newRow("zero threads") << QStringList{"bench", "matmul", "--threads", "0"} << QStringList{"--threads"};
    QTest::newRow("non-positive seconds") << QStringList{"bench", "matmul", "--seconds", "0"}
                                          << QStringList{"--seconds"};
    // A stray word or a single-dash flag would otherwise be ignored and the default
    // 1024-sized operator lowered in its place.
    QTest::newRow("extra argument") << QStringList{"lower", "matmul", "extra", "--m", "8"} << QStringList{"extra"};
    QTest::newRow("single-dash flag") << QStringList{"lower", "matmul", "-m", "8"} << QStringList{"-m"};
    QTest::newRow("single-dash flag, bench") << QStringList{"bench", "matmul", "-n", "8"} << QStringList{"-n"};
    QTest::newRow("extra argument, demo") << QStringList{"demo", "quick"} << QStringList{"quick"};
    QTest::newRow("unknown target") << QStringList{"lower", "matmul", "--target", "vulkan"}
                                    << QStringList{"--target", "vulkan"};
    QTest::newRow("operator without a GPU schedule")
        << QStringList{"lower", "bf16_matmul", "--target", "opencl"} << QStringList{"--target opencl", "matmul"};
    QTest::newRow("GPU module without a file") << QStringList{"lower", "matmul", "--target", "opencl", "--emit", "module"}
                                               << QStringList{"--output"};
    QTest::newRow("assembly for a GPU") << QStringList{"lower", "matmul", "--target", "opencl", "--emit", "asm"}
                                        << QStringList{"--emit", "source", "asm"};
  }

  // --target opencl / cuda: the same operator as OpenCL C or CUDA C, and as a module file.
  void lowerForGpuTargetsPrintsDeviceSource() {
    QStringList small = {"lower", "matmul", "--m", "64", "--n", "64", "--k", "32"};
    Run openCL = runTessel(small + QStringList{"--target", "opencl", "--emit", "source"});
    QVERIFY2(openCL.finished && openCL.exitCode == 0, qPrintable(describe(small, openCL)));
    QVERIFY2(openCL.out.contains("__kernel void") && openCL.out.contains("barrier(CLK_LOCAL_MEM_FENCE)"),
             qPrintable(openCL.out.left(2000)));
    Run cuda = runTessel(small + QStringList{"--target", "cuda -arch=sm_90", "--emit", "source"});
    QVERIFY2(cuda.finished && cuda.exitCode == 0, qPrintable(describe(small, cuda)));
    QVERIFY2(cuda.out.contains("extern \"C\" __global__ void") && cuda.out.contains("__syncthreads()"),
             qPrintable(cuda.out.left(2000)));
    // The loop IR for a GPU ends with the GPU steps: one kernel, bound loops.
    Run ir = runTessel(small + QStringList{"--target", "opencl", "--all-steps"});
    QVERIFY2(ir.finished && ir.exitCode == 0, qPrintable(describe(small, ir)));
    QVERIFY2(ir.out.contains("// ---- after verify_gpu") && ir.out.contains("attr device_kernel = 0") &&
                 ir.out.contains("bind(threadIdx.x)"),
             qPrintable(ir.out.right(2000)));
    if (!QFileInfo::exists("/usr/local/cuda/lib64")) QSKIP("no CUDA toolkit: the cubin module cannot be built here");
    QTemporaryDir dir;
    QString path = dir.filePath("mm.tgpu");
    Run module = runTessel(small + QStringList{"--target", "cuda -arch=sm_80", "--emit", "module", "--output", path});
    QVERIFY2(module.finished && module.exitCode == 0, qPrintable(describe(small, module)));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(json["format"].toString(), QString("tessel-gpu-module"));
    QCOMPARE(json["arch"].toString(), QString("sm_80"));
    QCOMPARE(json["code_format"].toString(), QString("cubin"));
    QCOMPARE(json["kernels"].toArray().size(), 1);
  }

  // tessel compile MODEL --target opencl -o FILE.tgpu: the whole model as one GPU module that
  // tessel-deploy-run runs (here through PoCL).
  void compileModelForAGpuTarget() {
    QTemporaryDir dir;
    QString path = dir.filePath("tiny.tgpu");
    QStringList arguments = {"compile", QString(TESSEL_SOURCE_DIR) + "/resources/examples/tiny_resnet.onnx", "--target",
                             "opencl", "-o", path};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    // 8 operations after fusion: three convolutions with their ReLU (and the residual add),
    // max pool, global average pool, flatten, gemm and softmax.
    QVERIFY2(run.out.contains("target=opencl") && run.out.contains("operations=8") && run.out.contains("kernels="),
             qPrintable(run.out));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject json = QJsonDocument::fromJson(file.readAll()).object();
    QCOMPARE(json["device"].toString(), QString("opencl"));
    QCOMPARE(json["outputs"].toArray().first().toString(), QString("probabilities"));
    // The weights travel inside the module as constants.
    int constants = 0;
    for (const QJsonValue& param : json["params"].toArray()) constants += param.toObject().contains("data");
    QVERIFY(constants >= 6);
  }

  // tessel run MODEL --target opencl: compiled for the GPU target, run once through OpenCL,
  // compared with the ONNX test's expected outputs.
  void runModelOnOpenCLMatchesTheExpectedOutputs() {
    QString test = "/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding";
    if (!QFileInfo::exists(test)) QSKIP("libonnx-testdata is not installed");
    QStringList arguments = {"run", test + "/model.onnx", "--inputs-dir", test + "/test_data_set_0",
                             "--expect-dir", test + "/test_data_set_0", "--target", "opencl"};
    Run run = runTessel(arguments);
    if (run.err.contains("no OpenCL")) QSKIP(qPrintable(run.err));
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("result=match"), qPrintable(run.out));
  }

  // tessel bench --target opencl runs the kernels through OpenCL (PoCL on a CPU), checks them
  // against the reference and times them on the device.
  void benchOnOpenCLChecksAndTimes() {
    QStringList arguments = {"bench", "conv2d", "--n", "1", "--c", "8", "--h", "12", "--w", "12", "--k", "16",
                             "--target", "opencl"};
    Run run = runTessel(arguments);
    if (run.err.contains("no OpenCL")) QSKIP(qPrintable(run.err));
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("result=matches reference") && run.out.contains("target=opencl") &&
                 run.out.contains("device=") && run.out.contains("gflops="),
             qPrintable(run.out));
  }
  void usageErrorsNameTheProblem() {
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, messageMentions);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    for (const QString& mention : messageMentions)
      QVERIFY2(run.err.contains(mention), qPrintable(mention + " missing from the message\n" + describe(arguments, run)));
    QVERIFY2(!run.out.contains("func ") && !run.out.contains("gflops="), qPrintable(describe(arguments, run)));
  }

  void lowerMatmulPrintsAParallelVectorizedLoopNest() {
    Run run = runTessel(kSmallMatmul);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(kSmallMatmul, run)));
    QVERIFY2(run.out.startsWith("func matmul_64x64x32("), qPrintable(run.out));
    QVERIFY2(run.out.contains("A: float32[64, 32]") && run.out.contains("B: float32[32, 64]") &&
                 run.out.contains("C: float32[64, 64]"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("parallel for ("), qPrintable(run.out));
    QVERIFY2(run.out.contains("ramp("), qPrintable(run.out));
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
  }

  void lowerAllStepsShowsEveryStepInOrder() {
    Run all = runTessel(kSmallMatmul + QStringList{"--all-steps"});
    QVERIFY2(all.finished && all.exitCode == 0, qPrintable(describe(kSmallMatmul, all)));
    QStringList printed;
    QRegularExpression header(R"(^// ---- after (\S+) \()", QRegularExpression::MultilineOption);
    for (auto it = header.globalMatch(all.out); it.hasNext();) printed << it.next().captured(1);
    QStringList expected;
    for (const std::string& name : tessel::loweringStepNames()) expected << QString::fromStdString(name);
    QCOMPARE(printed, expected);
    // Every step prints a whole function, and the last one is what plain `lower` prints.
    QCOMPARE(all.out.count("func matmul_64x64x32("), expected.size());
    Run final = runTessel(kSmallMatmul);
    QVERIFY(final.finished && final.exitCode == 0);
    QString lastStep = all.out.mid(all.out.lastIndexOf("// ---- after "));
    lastStep = lastStep.mid(lastStep.indexOf('\n') + 1);
    QCOMPARE(lastStep.trimmed(), final.out.trimmed());
    // The first step is the loop nest as written: nothing vectorized into ramps yet.
    QString firstStep = all.out.section("// ---- after ", 1, 1);
    QVERIFY2(!firstStep.contains("ramp("), qPrintable(firstStep));
  }

  // --emit shows the same function after code generation: LLVM IR or host assembly.
  void lowerEmitsLLVMAndAssembly() {
    Run llvm = runTessel(kSmallMatmul + QStringList{"--emit", "llvm"});
    QVERIFY2(llvm.finished && llvm.exitCode == 0, qPrintable(describe(kSmallMatmul, llvm)));
    QVERIFY2(QRegularExpression(R"(define [^\n]*@matmul_64x64x32)").match(llvm.out).hasMatch(), qPrintable(llvm.out));
    QVERIFY2(!llvm.out.contains("func matmul_64x64x32("), qPrintable(llvm.out.left(2000)));
    Run assembly = runTessel(kSmallMatmul + QStringList{"--emit", "asm"});
    QVERIFY2(assembly.finished && assembly.exitCode == 0, qPrintable(describe(kSmallMatmul, assembly)));
    QVERIFY2(QRegularExpression(R"(^matmul_64x64x32:)", QRegularExpression::MultilineOption)
                 .match(assembly.out)
                 .hasMatch(),
             qPrintable(assembly.out.left(2000)));
  }

  // The bfloat16 matmul runs on the BF16 tensor intrinsic: one dot_bf16 per 16 columns and
  // pair of reduction elements, vdpbf16ps where the CPU has AVX-512 BF16; sizes the packed
  // weight cannot hold are refused with the reason.
  void lowerBFloat16MatmulTensorizes() {
    QStringList args = {"lower", "bf16_matmul", "--m", "8", "--n", "32", "--k", "8"};
    Run run = runTessel(args);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(args, run)));
    QVERIFY2(run.out.contains("dot_bf16(") && run.out.contains("A: bfloat16[8, 8]"), qPrintable(run.out));
    QStringList assembly = args + QStringList{"--emit", "asm"};
    Run emitted = runTessel(assembly);
    QVERIFY2(emitted.exitCode == 0, qPrintable(describe(assembly, emitted)));
    QFile cpuinfo("/proc/cpuinfo");
    bool bf16 = cpuinfo.open(QIODevice::ReadOnly) && cpuinfo.readAll().contains("avx512_bf16");
    QCOMPARE(emitted.out.contains("vdpbf16ps"), bf16);
    QStringList odd = {"lower", "bf16_matmul", "--n", "40"};
    Run refused = runTessel(odd);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("multiple of 16"), qPrintable(describe(odd, refused)));
  }

  // The int8 matmul runs on AMX tiles where /proc/cpuinfo has amx_int8 (a tile_u8i8 nest,
  // tdpbusd in the assembly), else on dot_u8i8 (vpdpbusd with VNNI); k must fill 32-bit words.
  // (Where the kernel refuses the tiles the schedule falls back too; this machine's allows.)
  void lowerInt8MatmulTensorizes() {
    QStringList args = {"lower", "int8_matmul", "--m", "32", "--n", "32", "--k", "128"};
    Run run = runTessel(args);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(args, run)));
    QFile cpuinfo("/proc/cpuinfo");
    QByteArray flags = cpuinfo.open(QIODevice::ReadOnly) ? cpuinfo.readAll() : QByteArray();
    bool tiles = tessel::hasIntegerTiles(tessel::hostTarget());
    QVERIFY(!tiles || flags.contains("amx_int8"));
    QVERIFY2(run.out.contains(tiles ? "attr tile_dot_u8i8" : "dot_u8i8(") && run.out.contains("A: uint8[32, 128]"),
             qPrintable(run.out));
    QStringList assembly = args + QStringList{"--emit", "asm"};
    Run emitted = runTessel(assembly);
    QVERIFY2(emitted.exitCode == 0, qPrintable(describe(assembly, emitted)));
    QCOMPARE(emitted.out.contains("tdpbusd"), tiles);
    if (!tiles) QCOMPARE(emitted.out.contains("vpdpbusd"), flags.contains("avx512_vnni"));
    QStringList odd = {"lower", "int8_matmul", "--k", "30"};
    Run refused = runTessel(odd);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("k of 4"), qPrintable(describe(odd, refused)));
  }

  void lowerConv2dWithSmallSizes() {
    // 9x9 input, 3x3 kernel, stride 2, pad 1: (9 + 2 - 3) / 2 + 1 = 5 outputs per side.
    QStringList arguments{"lower", "conv2d", "--n", "1", "--c", "3", "--h", "9", "--w", "9", "--k", "4",
                          "--r", "3", "--s", "3", "--stride", "2", "--pad", "1"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.startsWith("func conv2d_"), qPrintable(run.out));
    QString signature = run.out.section('\n', 0, 0);
    QVERIFY2(signature.contains("float32[1, 3, 9, 9]"), qPrintable(signature));
    QVERIFY2(signature.contains("float32[4, 3, 3, 3]"), qPrintable(signature));
    QVERIFY2(signature.contains("float32[1, 4, 5, 5]"), qPrintable(signature));
    QVERIFY2(run.out.contains("for ("), qPrintable(run.out));
  }

  void lowerFollowsAScheduleFile() {
    QTemporaryDir directory;
    QVERIFY(directory.isValid());
    QString path = writeFile(directory, "rows.schedule", kRowBlockSchedule);
    QVERIFY(!path.isEmpty());
    Run byDefault = runTessel(kSmallMatmul);
    Run scheduled = runTessel(kSmallMatmul + QStringList{"--schedule", path});
    QVERIFY2(scheduled.finished && scheduled.exitCode == 0, qPrintable(describe(kSmallMatmul, scheduled)));
    QVERIFY2(scheduled.out.startsWith("func matmul_64x64x32("), qPrintable(scheduled.out));
    // 64 rows in blocks of 16: four parallel blocks of sixteen rows each.
    QVERIFY2(scheduled.out.contains("parallel for (io, 0, 4)"), qPrintable(scheduled.out));
    QVERIFY2(scheduled.out.contains("for (ii, 0, 16)"), qPrintable(scheduled.out));
    // The default's register tile is gone; it is there without the file.
    QVERIFY2(byDefault.out.contains("C.local"), qPrintable(byDefault.out));
    QVERIFY2(!scheduled.out.contains("C.local"), qPrintable(scheduled.out));
    QVERIFY(scheduled.out != byDefault.out);
  }

  void scheduleSyntaxErrorNamesFileLineAndColumn() {
    QTemporaryDir directory;
    QString path = writeFile(directory, "broken.schedule",
                             "# a comment, then a good line, then a missing parenthesis\n"
                             "io, ii = split(C, i, factor=16)\n"
                             "parallel(C, io\n");
    Run run = runTessel(kSmallMatmul + QStringList{"--schedule", path});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QRegularExpression located("^" + QRegularExpression::escape(path) + R"(:3:\d+: error: )");
    QVERIFY2(located.match(run.err).hasMatch(), qPrintable(run.err));
    QVERIFY2(run.out.isEmpty(), qPrintable(run.out));
  }

  void scheduleWithUnknownLoopNamesTheLine() {
    QTemporaryDir directory;
    QString path = writeFile(directory, "unknown-loop.schedule",
                             "io, ii = split(C, i, factor=16)\n"
                             "vectorize(C, columns)\n");
    for (const QString& command : {QString("lower"), QString("bench")}) {
      QStringList arguments{command, "matmul", "--m", "64", "--n", "64", "--k", "32", "--schedule", path};
      Run run = runTessel(arguments);
      QVERIFY(run.finished);
      QCOMPARE(run.exitCode, 2);
      QRegularExpression located("^" + QRegularExpression::escape(path) + R"(:2:\d+: error: )");
      QVERIFY2(located.match(run.err).hasMatch(), qPrintable(describe(arguments, run)));
      QVERIFY2(run.err.contains("columns"), qPrintable(run.err));
      QVERIFY2(run.out.isEmpty(), qPrintable(run.out));
    }
  }

  void missingScheduleFileIsAnError() {
    QTemporaryDir directory;
    QString path = directory.filePath("no-such.schedule");
    Run run = runTessel(kSmallMatmul + QStringList{"--schedule", path});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.startsWith(path + ": error: "), qPrintable(run.err));
    QVERIFY2(run.out.isEmpty(), qPrintable(run.out));
  }

  // bench checks against a plain C++ reference before timing, then reports throughput.
  void benchReportsThroughputOfCorrectResults_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("workload");
    QTest::newRow("matmul") << QStringList{"matmul", "--m", "64", "--n", "48", "--k", "32"} << "matmul_64x48x32";
    QTest::newRow("conv2d") << QStringList{"conv2d", "--n", "1", "--c", "8", "--h", "16", "--w", "16",
                                           "--k", "16", "--r", "3", "--s", "3", "--stride", "1", "--pad", "1"}
                            << "conv2d_n1c8h16w16k16r3s3st1p1";
    QTest::newRow("bf16_matmul") << QStringList{"bf16_matmul", "--m", "6", "--n", "48", "--k", "34"}
                                 << "bf16_matmul_6x48x34";
    QTest::newRow("int8_matmul on tiles") << QStringList{"int8_matmul", "--m", "40", "--n", "48", "--k", "192"}
                                          << "int8_matmul_40x48x192";
    QTest::newRow("int8_matmul on dot_u8i8") << QStringList{"int8_matmul", "--m", "5", "--n", "32", "--k", "36"}
                                             << "int8_matmul_5x32x36";
  }
  void benchReportsThroughputOfCorrectResults() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, workload);
    arguments = QStringList{"bench"} + arguments + QStringList{"--threads", "2", "--seconds", "0.05"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    auto values = keyValues(run.out);
    QCOMPARE(values.value("workload"), workload);
    QCOMPARE(values.value("threads"), QString("2"));
    QVERIFY2(values.value("result").startsWith("matches reference"), qPrintable(run.out));
    double gflops = positiveNumber(values.value("gflops"));
    double peak = positiveNumber(values.value("peak_gflops"));
    double fraction = positiveNumber(values.value("fraction_of_peak"));
    QVERIFY2(gflops > 0 && peak > 0 && fraction > 0, qPrintable(run.out));
    // The fraction is the median of per-block ratios (kernel block over the FMA probe block
    // beside it), so it is close to, but not exactly, the ratio of the two medians.
    QVERIFY2(positiveNumber(values.value("block_pairs")) >= 5, qPrintable(run.out));
    QVERIFY2(fraction >= 0.5 * gflops / peak && fraction <= 2.0 * gflops / peak, qPrintable(run.out));
    QVERIFY2(positiveNumber(values.value("median_ms")) > 0, qPrintable(run.out));
  }

  // Shapes so small that the checker sees every output element, none of them a multiple
  // of the vector width, so every loop's tail runs and is compared with the reference.
  void benchChecksTinyShapesAgainstTheReference_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::newRow("matmul 1x1x1") << QStringList{"matmul", "--m", "1", "--n", "1", "--k", "1"};
    QTest::newRow("matmul 7x13x5") << QStringList{"matmul", "--m", "7", "--n", "13", "--k", "5"};
    QTest::newRow("conv2d 1x2x5x7, 3x2 kernel, stride 2")
        << QStringList{"conv2d", "--n", "1", "--c", "2", "--h", "5", "--w", "7", "--k", "3",
                       "--r", "3", "--s", "2", "--stride", "2", "--pad", "1"};
    QTest::newRow("conv2d batch 2, no padding")
        << QStringList{"conv2d", "--n", "2", "--c", "3", "--h", "4", "--w", "4", "--k", "5",
                       "--r", "3", "--s", "3", "--stride", "1", "--pad", "0"};
  }
  void benchChecksTinyShapesAgainstTheReference() {
    QFETCH(QStringList, arguments);
    arguments = QStringList{"bench"} + arguments + QStringList{"--threads", "2", "--seconds", "0.02"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QString result = keyValues(run.out).value("result");
    QVERIFY2(result.startsWith("matches reference"), qPrintable(run.out));
    // The worst element's error, as a share of the tolerance, is printed and within it.
    auto worst = QRegularExpression(R"(worst error (\S+) of tolerance)").match(result);
    QVERIFY2(worst.hasMatch(), qPrintable(run.out));
    bool parsed = false;
    double ratio = worst.captured(1).toDouble(&parsed);
    QVERIFY2(parsed && ratio >= 0 && ratio <= 1, qPrintable(run.out));
  }

  void benchRunsAHandWrittenSchedule() {
    QTemporaryDir directory;
    QString path = writeFile(directory, "rows.schedule", kRowBlockSchedule);
    QStringList arguments{"bench", "matmul", "--m", "48", "--n", "20", "--k", "9",
                          "--schedule", path, "--threads", "2", "--seconds", "0.05"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(keyValues(run.out).value("result").startsWith("matches reference"), qPrintable(run.out));
    QVERIFY2(positiveNumber(keyValues(run.out).value("gflops")) > 0, qPrintable(run.out));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
