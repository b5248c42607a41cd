// Packed functions, their values and argument errors, modules, and wrapped C kernels.
#include <QtTest>

#include <map>

#include "runtime/KernelFunction.h"
#include "runtime/Module.h"
#include "runtime/PackedFunc.h"

using namespace tessel::runtime;

namespace {

QString errorMessageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return QString::fromUtf8(error.what());
  }
  return QString();
}

/// A module over a fixed table of functions, the shape a JIT module takes.
class TableModule : public Module {
public:
  explicit TableModule(std::map<std::string, PackedFunc> functions) : functions_(std::move(functions)) {}
  std::string typeKey() const override { return "table"; }
  PackedFunc getFunction(const std::string& name) const override {
    auto found = functions_.find(name);
    return found == functions_.end() ? PackedFunc() : found->second;
  }
  std::vector<std::string> functionNames() const override {
    std::vector<std::string> names;
    for (const auto& [name, function] : functions_) names.push_back(name);
    return names;
  }

private:
  std::map<std::string, PackedFunc> functions_;
};

/// What a compiled `C[i] = A[i] + B[i]` over 4 float32 elements looks like to the runtime.
int32_t addKernel(void** args) {
  auto* a = static_cast<const float*>(args[0]);
  auto* b = static_cast<const float*>(args[1]);
  auto* c = static_cast<float*>(args[2]);
  for (int i = 0; i < 4; ++i) c[i] = a[i] + b[i];
  return 0;
}

int32_t failingKernel(void**) { return 3; }

NDArray floats(std::vector<float> values) {
  NDArray array = NDArray::empty({int64_t(values.size())}, DataType::float32());
  array.copyFrom(values);
  return array;
}

}  // namespace

class TestPackedFunc : public QObject {
  Q_OBJECT
private slots:
  void valuesKeepWhatTheyHold() {
    QCOMPARE(Value(42).asInt(), int64_t(42));
    QCOMPARE(Value(true).asInt(), int64_t(1));
    QCOMPARE(Value(2.5f).asDouble(), 2.5);
    QCOMPARE(Value(7).asDouble(), 7.0);  // ints widen to floats
    QCOMPARE(Value("relu").asString(), std::string("relu"));
    int target = 0;
    QCOMPARE(Value(static_cast<void*>(&target)).asPointer(), static_cast<void*>(&target));
    NDArray array = NDArray::empty({2}, DataType::int8());
    QCOMPARE(Value(array).asArray().data(), array.data());
    QVERIFY(Value().isNone());
    QVERIFY(Value(nullptr).kind() == Value::Kind::Pointer);
  }

  void valueKindMismatchesNameBothKinds() {
    QString message = errorMessageOf([] { Value("x").asInt(); });
    QVERIFY2(message.contains("an int") && message.contains("string \"x\""), qPrintable(message));
    message = errorMessageOf([] { Value(1.5).asInt(); });
    QVERIFY2(message.contains("float 1.5"), qPrintable(message));
    message = errorMessageOf([] { Value(300).as<int8_t>(); });
    QVERIFY2(message.contains("8-bit") && message.contains("300"), qPrintable(message));
    message = errorMessageOf([] { Value(-1).as<uint32_t>(); });
    QVERIFY2(message.contains("unsigned"), qPrintable(message));
  }

  void typedFunctionsConvertArgumentsAndResults() {
    PackedFunc scaleAdd = PackedFunc::fromTyped("scale_add", [](int64_t a, double scale, float b) {
      return a * scale + b;
    });
    QVERIFY(bool(scaleAdd));
    QCOMPARE(QString::fromStdString(scaleAdd.name()), QString("scale_add"));
    QCOMPARE(scaleAdd(3, 2.0, 0.5).asDouble(), 6.5);
    PackedFunc greet = PackedFunc::fromTyped("greet", [](const std::string& who) { return "hello " + who; });
    QCOMPARE(greet("tessel").asString(), std::string("hello tessel"));
    int calls = 0;
    PackedFunc count = PackedFunc::fromTyped("count", [&calls] { ++calls; });
    QVERIFY(count().isNone());
    QCOMPARE(calls, 1);
    PackedFunc sum = PackedFunc::fromTyped("sum", [](NDArray array) {
      double total = 0;
      for (float value : array.values<float>()) total += value;
      return total;
    });
    QCOMPARE(sum(floats({1, 2, 3.5f})).asDouble(), 6.5);
  }

  void wrongArgumentCountIsAClearError() {
    PackedFunc add = PackedFunc::fromTyped("add", [](int64_t a, int64_t b) { return a + b; });
    QString message = errorMessageOf([&] { add(1, 2, 3); });
    QCOMPARE(message, QString("add: expected 2 arguments, got 3"));
    message = errorMessageOf([&] { add(1); });
    QCOMPARE(message, QString("add: expected 2 arguments, got 1"));
  }

  void wrongArgumentTypeNamesTheArgument() {
    PackedFunc add = PackedFunc::fromTyped("add", [](int64_t a, int64_t b) { return a + b; });
    QString message = errorMessageOf([&] { add(1, "two"); });
    QCOMPARE(message, QString("add: argument 2 expected an int but got string \"two\""));
  }

  void untypedFunctionsUnpackTheirOwnArguments() {
    PackedFunc concat("concat", [](PackedArgs args) -> Value {
      std::string text;
      for (const Value& value : args) text += value.asString();
      return text;
    });
    QCOMPARE(concat("a", "b", "c").asString(), std::string("abc"));
    PackedFunc second("second", [](PackedArgs args) -> Value { return args[1]; });
    QCOMPARE(errorMessageOf([&] { second(1); }), QString("second: argument 2 requested but only 1 given"));
  }

  void callingAnEmptyFunctionIsAnError() {
    PackedFunc empty;
    QVERIFY(!empty);
    QVERIFY(!errorMessageOf([&] { empty(); }).isEmpty());
  }

  void modulesFindFunctionsByName() {
    auto module = std::make_shared<TableModule>(std::map<std::string, PackedFunc>{
        {"double", PackedFunc::fromTyped("double", [](int64_t x) { return 2 * x; })},
        {"negate", PackedFunc::fromTyped("negate", [](double x) { return -x; })}});
    QCOMPARE(module->getFunction("double")(21).asInt(), int64_t(42));
    QVERIFY(!module->getFunction("triple"));
    QCOMPARE(module->functionNames(), (std::vector<std::string>{"double", "negate"}));
    QString message = errorMessageOf([&] { module->requireFunction("triple"); });
    QVERIFY2(message.contains("'triple'") && message.contains("double, negate"), qPrintable(message));
  }

  void wrappedKernelsRunOnArrays() {
    std::vector<KernelParameter> parameters = {{"A", {4}, DataType::float32()},
                                               {"B", {4}, DataType::float32()},
                                               {"C", {4}, DataType::float32()}};
    PackedFunc add = wrapKernel("add", addKernel, parameters);
    NDArray c = NDArray::empty({4}, DataType::float32());
    QVERIFY(add(floats({1, 2, 3, 4}), floats({10, 20, 30, 40}), c).isNone());
    QCOMPARE(c.toVector<float>(), (std::vector<float>{11, 22, 33, 44}));
  }

  void wrappedKernelsRejectWrongArraysBeforeRunning() {
    std::vector<KernelParameter> parameters = {{"A", {4}, DataType::float32()},
                                               {"B", {4}, DataType::float32()},
                                               {"C", {4}, DataType::float32()}};
    PackedFunc add = wrapKernel("add", addKernel, parameters);
    NDArray c = NDArray::empty({4}, DataType::float32());
    QString message = errorMessageOf([&] { add(floats({1, 2, 3, 4}), floats({1, 2, 3}), c); });
    QVERIFY2(message.startsWith("add: argument 2 (B)") && message.contains("float32[3]") &&
                 message.contains("float32[4]"),
             qPrintable(message));
    message = errorMessageOf([&] { add(floats({1, 2, 3, 4}), floats({1, 2, 3, 4}), NDArray::empty({4}, DataType::int32())); });
    QVERIFY2(message.contains("(C)") && message.contains("int32[4]"), qPrintable(message));
    message = errorMessageOf([&] { add(floats({1, 2, 3, 4}), 5, c); });
    QVERIFY2(message.contains("argument 2") && message.contains("an array"), qPrintable(message));
    QCOMPARE(errorMessageOf([&] { add(c, c); }), QString("add: expected 3 arguments, got 2"));
  }

  void kernelFailureBecomesAnError() {
    PackedFunc failing = wrapKernel("broken", failingKernel, {});
    QCOMPARE(errorMessageOf([&] { failing(); }), QString("broken: kernel failed with status 3"));
  }
};

QTEST_GUILESS_MAIN(TestPackedFunc)
#include "test_packed_func.moc"
