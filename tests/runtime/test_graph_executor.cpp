// Loading exported modules: every inconsistency in graph.json, params.bin or the kernel library
// is a clear error naming the file and the entry (C++ and C API), never a crash. Modules
// with real kernels are exercised in tests/compiler/test_export.cpp.
#include <QtTest>

#include <cstring>
#include <fstream>
#include <vector>

#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "runtime/tessel_runtime.h"

using namespace tessel::runtime;

namespace {

// A consistent plan with no nodes: input x and param w live in storage 0 at different
// offsets, output y shares storage 1 with nothing. %NODES% and friends are replaced per row.
const char* kValidGraph = R"({
  "format": "tessel-graph", "version": 1, "library": "kernels.so",
  "storages": [{"id": 0, "bytes": 128}, {"id": 1, "bytes": 16}],
  "tensors": [
    {"name": "x", "dtype": "float32", "shape": [2, 2], "storage": 0, "offset": 0},
    {"name": "w", "dtype": "int64", "shape": [2], "storage": 0, "offset": 64},
    {"name": "y", "dtype": "float32", "shape": [4], "storage": 1, "offset": 0}
  ],
  "inputs": ["x"], "outputs": ["x", "w"],
  "params": [{"tensor": "w", "offset": 0, "bytes": 16}],
  "nodes": []
})";

enum class Library { KernelFree, Garbage, Missing };

void writeFile(const QString& path, const QByteArray& contents) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(file.write(contents), qint64(contents.size()));
}

/// Writes a module directory. tests/runtime/KernelFreeLibrary.cpp serves as a kernels.so that
/// defines no kernel: a real shared object that loads, yet cannot satisfy any node.
void writeModule(const QString& directory, const QByteArray& graph, const QByteArray& params, Library library) {
  writeFile(directory + "/graph.json", graph);
  if (!params.isNull()) writeFile(directory + "/params.bin", params);
  QFile::remove(directory + "/kernels.so");
  if (library == Library::KernelFree)
    QVERIFY(QFile::copy(TESSEL_BINARY_DIR "/tests/libtessel_test_kernel_free.so", directory + "/kernels.so"));
  else if (library == Library::Garbage)
    writeFile(directory + "/kernels.so", "this is not an ELF file");
}

QByteArray defaultParams() {
  std::vector<int64_t> values = {7, -3};
  return QByteArray(reinterpret_cast<const char*>(values.data()), int(values.size() * sizeof(int64_t)));
}

// out[i] = in[i] + 1 over four floats: the kernel of the in-place binding tests.
int32_t addOne(void** args) {
  const float* in = static_cast<const float*>(args[0]);
  float* out = static_cast<float*>(args[1]);
  for (int i = 0; i < 4; ++i) out[i] = in[i] + 1.0f;
  return 0;
}

// x -> addOne -> t -> addOne -> y. With `shared`, t reuses x's storage and y shares one with a
// scratch tensor z, as memory planning may arrange; otherwise each has a storage of its own.
std::unique_ptr<GraphExecutor> twoStepExecutor(bool shared) {
  GraphPlan plan;
  plan.library = "kernels.so";
  plan.storages = {{0, 64}, {1, 64}, {2, 128}};
  auto tensor = [](const char* name, int64_t storage, int64_t offset) {
    return GraphTensor{name, DataType::float32(), {4}, storage, offset};
  };
  plan.tensors = {tensor("x", 0, 0), tensor("t", shared ? 0 : 1, 0), tensor("y", 2, 0)};
  if (shared) plan.tensors.push_back(tensor("z", 2, 64));
  plan.inputs = {"x"};
  plan.outputs = {"y"};
  plan.nodes = {{"first", "add_one", {"x", "t"}}, {"second", "add_one", {"t", "y"}}};
  return GraphExecutor::create(plan, [](const std::string&) { return &addOne; }, {}, nullptr, "two steps");
}

NDArray floats(std::vector<float> values) {
  NDArray array = NDArray::empty({int64_t(values.size())}, DataType::float32());
  array.copyFrom(values.data(), values.size() * sizeof(float));
  return array;
}

std::vector<float> valuesOf(const NDArray& array) {
  auto span = array.values<float>();
  return std::vector<float>(span.begin(), span.end());
}

QString loadError(const QString& directory) {
  try {
    GraphExecutor::load(directory.toStdString());
  } catch (const Error& error) {
    return QString::fromStdString(error.what());
  }
  return "(loaded without error)";
}

}  // namespace

class TestGraphExecutor : public QObject {
  Q_OBJECT
private slots:
  void loadsAConsistentModuleAndCopiesParamsIn() {
    QTemporaryDir dir;
    writeModule(dir.path(), kValidGraph, defaultParams(), Library::KernelFree);
    auto executor = GraphExecutor::load(dir.path().toStdString());
    QCOMPARE(executor->getOutput("w").toVector<int64_t>(), (std::vector<int64_t>{7, -3}));
    std::vector<float> input = {1.5f, -2, 3, 4};
    executor->setInput("x", input.data(), input.size() * sizeof(float));
    executor->run();
    QCOMPARE(executor->getOutput("x").toVector<float>(), input);
    QCOMPARE(executor->getOutput("x").shape(), (std::vector<int64_t>{2, 2}));
  }

  void writtenPlanReadsBackUnchanged() {
    GraphPlan plan = parseGraphJson(kValidGraph, "graph.json");
    plan.nodes.push_back({"conv_0", "fused_conv_relu_0", {"x", "w", "y"}});
    std::string text = writeGraphJson(plan);
    GraphPlan back = parseGraphJson(text, "written.json");
    QCOMPARE(writeGraphJson(back), text);
    QCOMPARE(back.tensors.size(), size_t(3));
    QCOMPARE(back.tensors[1].dtype, DataType::int64());
    QCOMPARE(back.tensors[1].offset, int64_t(64));
    QCOMPARE(back.params[0].bytes, int64_t(16));
    QCOMPARE(back.nodes[0].args, (std::vector<std::string>{"x", "w", "y"}));
    // One line per tensor, so plans diff readably.
    QVERIFY(QString::fromStdString(text).contains(R"({"name":"w","dtype":"int64","shape":[2],"storage":0,"offset":64})"));
  }

  void setInputAndGetOutputCheckNamesAndSizes() {
    QTemporaryDir dir;
    writeModule(dir.path(), kValidGraph, defaultParams(), Library::KernelFree);
    auto executor = GraphExecutor::load(dir.path().toStdString());
    std::vector<float> small(3);
    QVERIFY_THROWS_EXCEPTION(Error, executor->setInput("x", small.data(), small.size() * sizeof(float)));
    QVERIFY_THROWS_EXCEPTION(Error, executor->setInput("w", small.data(), 16));  // a param, not an input
    QVERIFY_THROWS_EXCEPTION(Error, executor->setInput("y", small.data(), 16));
    auto wrongShape = NDArray::empty({4}, DataType::float32());
    QVERIFY_THROWS_EXCEPTION(Error, executor->setInput("x", wrongShape));
    auto wrongType = NDArray::empty({2, 2}, DataType::int32());
    QVERIFY_THROWS_EXCEPTION(Error, executor->setInput("x", wrongType));
    QVERIFY_THROWS_EXCEPTION(Error, executor->getOutput("nope"));
    QVERIFY_THROWS_EXCEPTION(Error, executor->getOutput("x", small.data(), small.size() * sizeof(float)));
  }

  void boundInputsAreReadInPlaceAndOutputsHandedOver() {
    // The interpreter runs loop bodies this way: no copy in, no copy out, and nothing it
    // holds is ever written again.
    auto executor = twoStepExecutor(/*shared=*/false);
    NDArray x = floats({1, 2, 3, 4});
    QVERIFY(executor->bindInput("x", x));
    executor->run();
    NDArray first = executor->takeOutput("y");
    QVERIFY(first.defined());
    QCOMPARE(valuesOf(first), (std::vector<float>{3, 4, 5, 6}));
    NDArray x2 = floats({10, 20, 30, 40});
    QVERIFY(executor->bindInput("x", x2));
    executor->run();
    NDArray second = executor->takeOutput("y");
    QCOMPARE(valuesOf(second), (std::vector<float>{12, 22, 32, 42}));
    QCOMPARE(valuesOf(first), (std::vector<float>{3, 4, 5, 6}));  // the next run wrote elsewhere
    // setInput after a binding copies into storage of the executor's own, not into x2.
    executor->setInput("x", floats({0, 0, 0, 0}));
    executor->run();
    QCOMPARE(valuesOf(x2), (std::vector<float>{10, 20, 30, 40}));
    QCOMPARE(valuesOf(executor->getOutput("y")), (std::vector<float>{2, 2, 2, 2}));
    QCOMPARE(valuesOf(x), (std::vector<float>{1, 2, 3, 4}));
  }

  void aLoopCarriedThroughTheExecutorReusesItsMemory() {
    // Each output is the next input, as in a loop body: an array handed back once nobody
    // else holds it becomes a later output's storage, instead of fresh memory to fault in.
    auto executor = twoStepExecutor(/*shared=*/false);
    NDArray carried = floats({1, 2, 3, 4});
    const void* firstMemory = carried.data();
    for (int iteration = 0; iteration < 3; ++iteration) {
      QVERIFY(executor->bindInput("x", carried));
      executor->run();
      carried = executor->takeOutput("y");
      QVERIFY(carried.defined());
    }
    QCOMPARE(valuesOf(carried), (std::vector<float>{7, 8, 9, 10}));
    QCOMPARE(carried.data(), firstMemory);
  }

  void sharedStoragesAreNeverBoundOrHandedOver() {
    auto executor = twoStepExecutor(/*shared=*/true);
    NDArray x = floats({1, 2, 3, 4});
    QVERIFY(!executor->bindInput("x", x));  // t would be written into it
    QVERIFY(!executor->bindInput("x", floats({1, 2, 3})));  // the wrong shape
    executor->setInput("x", x);
    executor->run();
    QVERIFY(!executor->takeOutput("y").defined());  // z shares y's storage
    QCOMPARE(valuesOf(executor->getOutput("y")), (std::vector<float>{3, 4, 5, 6}));
    QCOMPARE(valuesOf(x), (std::vector<float>{1, 2, 3, 4}));
    QVERIFY(!twoStepExecutor(false)->takeOutput("x").defined());  // an input is not handed over
    // Nor is a param: the next run would find its constant gone.
    QTemporaryDir dir;
    writeModule(dir.path(), kValidGraph, defaultParams(), Library::KernelFree);
    auto module = GraphExecutor::load(dir.path().toStdString());
    QVERIFY(!module->takeOutput("w").defined());
    QCOMPARE(module->getOutput("w").toVector<int64_t>(), (std::vector<int64_t>{7, -3}));
  }

  void rejectsInconsistentModules_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<int>("library");
    QTest::addColumn<QByteArray>("params");
    QTest::addColumn<QStringList>("expected");
    const int ok = int(Library::KernelFree);
    QByteArray params = defaultParams();
    auto row = [&](const char* name, QString from, QString to, QStringList expected, int library = int(Library::KernelFree),
                   QByteArray paramBytes = defaultParams()) {
      QTest::newRow(name) << from << to << library << paramBytes << expected;
    };
    row("malformed JSON", "\"nodes\": []", "\"nodes\": [", {"graph.json", "malformed JSON"});
    row("wrong format", "tessel-graph", "onnx", {"graph.json", "format", "onnx"});
    row("unsupported version", "\"version\": 1", "\"version\": 2", {"graph.json", "unsupported version 2"});
    row("missing field", "\"outputs\": [\"x\", \"w\"],", "", {"graph.json", "missing field \"outputs\""});
    row("mistyped field", "\"shape\": [2, 2]", "\"shape\": \"2x2\"", {"tensors[0].shape", "expected an array"});
    row("non-integer extent", "\"shape\": [2, 2]", "\"shape\": [2, 2.5]", {"tensors[0].shape[1]", "expected an integer"});
    row("unknown dtype", "\"dtype\": \"int64\"", "\"dtype\": \"int65\"", {"tensors[1].dtype", "int65"});
    row("negative extent", "\"shape\": [4]", "\"shape\": [-4]", {"tensors[2] 'y'", "negative extent"});
    row("unknown storage", "\"storage\": 1", "\"storage\": 7", {"tensors[2] 'y'", "unknown storage 7"});
    row("tensor exceeds storage", "\"bytes\": 16}]", "\"bytes\": 12}]", {"tensors[2] 'y'", "exceed storage 1"});
    row("misaligned offset", "\"offset\": 64}", "\"offset\": 60}", {"tensors[1] 'w'", "multiple of 64"});
    row("duplicate tensor", "\"name\": \"y\"", "\"name\": \"x\"", {"tensors[2] 'x'", "appears twice"});
    row("duplicate storage", "{\"id\": 1,", "{\"id\": 0,", {"storages[1]", "appears twice"});
    row("unknown input", "\"inputs\": [\"x\"]", "\"inputs\": [\"z\"]", {"inputs[0]", "unknown tensor 'z'"});
    row("unknown output", "\"outputs\": [\"x\", \"w\"]", "\"outputs\": [\"x\", \"q\"]", {"outputs[1]", "unknown tensor 'q'"});
    row("param of unknown tensor", "{\"tensor\": \"w\"", "{\"tensor\": \"v\"", {"params[0]", "unknown tensor 'v'"});
    row("param size differs from tensor", "\"bytes\": 16}],\n  \"nodes\"", "\"bytes\": 8}],\n  \"nodes\"",
        {"params[0]", "8 bytes for tensor 'w' which holds 16"});
    row("param is an input", "\"inputs\": [\"x\"]", "\"inputs\": [\"w\"]", {"params[0]", "both an input and a param"});
    row("param outside params.bin", "", "", {"params[0]", "params.bin", "outside"}, ok, params.left(12));
    row("params.bin missing", "", "", {"params.bin", "cannot open"}, ok, QByteArray());
    row("unknown node argument", "\"nodes\": []", "\"nodes\": [{\"name\": \"n0\", \"kernel\": \"k\", \"args\": [\"x\", \"t\"]}]",
        {"nodes[0] 'n0' args[1]", "unknown tensor 't'"});
    row("storage too large to allocate", "{\"id\": 1, \"bytes\": 16}", "{\"id\": 1, \"bytes\": 4611686018427387904}",
        {"storages[1]", "cannot allocate"});
    row("library outside the directory", "\"library\": \"kernels.so\"", "\"library\": \"../kernels.so\"",
        {"library", "plain file name"});
    row("library missing", "", "", {"kernels.so", "does not exist"}, int(Library::Missing));
    row("library not loadable", "", "", {"kernels.so", "cannot load the kernel library"}, int(Library::Garbage));
    row("kernel missing", "\"nodes\": []",
        "\"nodes\": [{\"name\": \"conv_0\", \"kernel\": \"fused_conv_relu_0\", \"args\": [\"x\"]}]",
        {"graph.json", "nodes[0] 'conv_0'", "fused_conv_relu_0", "not defined"});
  }
  void rejectsInconsistentModules() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(int, library);
    QFETCH(QByteArray, params);
    QFETCH(QStringList, expected);
    QString graph = kValidGraph;
    if (!from.isEmpty()) {
      QVERIFY2(graph.contains(from), qPrintable("test row edits text that is not there: " + from));
      graph.replace(graph.indexOf(from), from.size(), to);
    }
    QTemporaryDir dir;
    writeModule(dir.path(), graph.toUtf8(), params, Library(library));
    QString message = loadError(dir.path());
    for (const QString& part : expected)
      QVERIFY2(message.contains(part), qPrintable("'" + part + "' missing from: " + message));
  }

  void missingGraphOrDirectoryIsAnError() {
    QTemporaryDir dir;
    QVERIFY(loadError(dir.path()).contains("graph.json"));
    QVERIFY(loadError(dir.path() + "/absent").contains("not a directory"));
  }

  void cApiReportsErrorsThroughStatusAndMessage() {
    TesselModule* module = reinterpret_cast<TesselModule*>(0x1);
    QTemporaryDir dir;
    QCOMPARE(tessel_module_load(dir.path().toUtf8().constData(), &module), TESSEL_ERROR);
    QVERIFY(module == nullptr);
    QVERIFY(QString(tessel_last_error()).contains("graph.json"));
    QCOMPARE(tessel_module_load(nullptr, &module), TESSEL_ERROR);
    QCOMPARE(tessel_module_load(dir.path().toUtf8().constData(), nullptr), TESSEL_ERROR);
    QCOMPARE(tessel_module_run(nullptr), TESSEL_ERROR);
    QVERIFY(QString(tessel_last_error()).contains("NULL"));
    float value = 0;
    QCOMPARE(tessel_module_set_input(nullptr, "x", &value, sizeof value), TESSEL_ERROR);
    QCOMPARE(tessel_module_get_output(nullptr, "x", &value, sizeof value), TESSEL_ERROR);
    tessel_module_free(nullptr);

    writeModule(dir.path(), kValidGraph, defaultParams(), Library::KernelFree);
    QCOMPARE(tessel_module_load(dir.path().toUtf8().constData(), &module), TESSEL_OK);
    QVERIFY(module != nullptr);
    QCOMPARE(tessel_module_set_input(module, "x", &value, sizeof value), TESSEL_ERROR);
    QVERIFY2(QString(tessel_last_error()).contains("16 bytes"), tessel_last_error());
    QCOMPARE(tessel_module_set_input(module, nullptr, &value, sizeof value), TESSEL_ERROR);
    QCOMPARE(tessel_module_get_output(module, "nope", &value, sizeof value), TESSEL_ERROR);
    QVERIFY(QString(tessel_last_error()).contains("nope"));
    size_t bytes = 0;
    QCOMPARE(tessel_module_tensor_bytes(module, "w", &bytes), TESSEL_OK);
    QCOMPARE(bytes, size_t(16));
    float input[4] = {1, 2, 3, 4};
    float output[4] = {};
    QCOMPARE(tessel_module_set_input(module, "x", input, sizeof input), TESSEL_OK);
    QCOMPARE(tessel_module_run(module), TESSEL_OK);
    QCOMPARE(tessel_module_get_output(module, "x", output, sizeof output), TESSEL_OK);
    QVERIFY(std::memcmp(input, output, sizeof input) == 0);
    tessel_module_free(module);
  }

  void npyRoundTripsAndRejectsWhatItCannotRead() {
    QTemporaryDir dir;
    std::string path = (dir.path() + "/a.npy").toStdString();
    auto array = NDArray::empty({2, 3}, DataType::int64());
    array.copyFrom(std::vector<int64_t>{1, -2, 3, -4, 5, 1LL << 40});
    writeNpy(path, array);
    NDArray back = readNpy(path);
    QCOMPARE(back.shape(), array.shape());
    QCOMPARE(back.toVector<int64_t>(), array.toVector<int64_t>());

    auto header = [](const QByteArray& dict) {
      QByteArray h = dict;
      while ((10 + h.size() + 1) % 64) h += ' ';
      h += '\n';
      QByteArray file("\x93NUMPY\x01\x00", 8);
      file += char(h.size() & 0xff);
      file += char(h.size() >> 8);
      return file + h;
    };
    QString fortran = dir.path() + "/f.npy";
    writeFile(fortran, header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") + QByteArray(4, 0));
    QVERIFY_THROWS_EXCEPTION(Error, readNpy(fortran.toStdString()));
    QString bigEndian = dir.path() + "/b.npy";
    writeFile(bigEndian, header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + QByteArray(4, 0));
    QVERIFY_THROWS_EXCEPTION(Error, readNpy(bigEndian.toStdString()));
    QString truncated = dir.path() + "/t.npy";
    writeFile(truncated, header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }") + QByteArray(12, 0));
    QVERIFY_THROWS_EXCEPTION(Error, readNpy(truncated.toStdString()));
    QString good = dir.path() + "/g.npy";
    writeFile(good, header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }") + QByteArray(8, 0));
    QCOMPARE(readNpy(good.toStdString()).shape(), (std::vector<int64_t>{2}));
  }
};

QTEST_GUILESS_MAIN(TestGraphExecutor)
#include "test_graph_executor.moc"
