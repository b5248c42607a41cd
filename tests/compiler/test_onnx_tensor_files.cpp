// ONNX tensor files as the backend test suite stores them: raw and typed-field data of every
// element type Tessel has, and bad, sequence and optional files explained.
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/OnnxImportTestSupport.h"
#include "tests/compiler/OnnxProto.h"

#include <cmath>

#include "compiler/frontend/onnx/OnnxImporter.h"

using namespace tessel;
using namespace tessel::frontend;
using namespace tessel::testing::onnx_import;

namespace {

double halfToDouble(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(mantissa + 1024, exponent - 25);
  return (bits >> 15) ? -magnitude : magnitude;
}

}  // namespace

class TestOnnxTensorFiles : public QObject {
  Q_OBJECT
private slots:

  void readsFloatTensorFilesOfTheSuite() {
    REQUIRE_CONFORMANCE_DATA();
    const std::string test = "test_add";
    auto x = readTensorProtoFile(conformanceTensor(test, "input_0.pb"));
    auto y = readTensorProtoFile(conformanceTensor(test, "input_1.pb"));
    auto sum = readTensorProtoFile(conformanceTensor(test, "output_0.pb"));
    QVERIFY2(x.ok() && y.ok() && sum.ok(), qPrintable(errorText(x) + errorText(y) + errorText(sum)));
    auto inputs = readOnnxInputs(conformanceModel(test));
    QVERIFY(inputs.ok());
    QCOMPARE(x->shape(), (*inputs)[0].shape);
    QCOMPARE(x->dtype(), runtime::DataType::float32());
    auto xs = x->toVector<float>(), ys = y->toVector<float>(), sums = sum->toVector<float>();
    for (size_t i = 0; i < sums.size(); ++i) QCOMPARE(sums[i], xs[i] + ys[i]);
  }

  void readsBoolTensorFiles() {
    REQUIRE_CONFORMANCE_DATA();
    const std::string test = "test_and2d";
    auto x = readTensorProtoFile(conformanceTensor(test, "input_0.pb"));
    auto y = readTensorProtoFile(conformanceTensor(test, "input_1.pb"));
    auto both = readTensorProtoFile(conformanceTensor(test, "output_0.pb"));
    QVERIFY2(x.ok() && y.ok() && both.ok(), qPrintable(errorText(x) + errorText(y) + errorText(both)));
    QCOMPARE(both->dtype(), runtime::DataType::boolean());
    auto* xs = static_cast<const uint8_t*>(x->data());
    auto* ys = static_cast<const uint8_t*>(y->data());
    auto* out = static_cast<const uint8_t*>(both->data());
    for (int64_t i = 0; i < both->numElements(); ++i) QCOMPARE(out[i] != 0, xs[i] != 0 && ys[i] != 0);
    QVERIFY(both->numElements() > 0);
  }

  void readsInt64TensorFiles() {
    REQUIRE_CONFORMANCE_DATA();
    const std::string test = "test_argmax_default_axis_random";
    auto data = readTensorProtoFile(conformanceTensor(test, "input_0.pb"));
    auto indices = readTensorProtoFile(conformanceTensor(test, "output_0.pb"));
    QVERIFY2(data.ok() && indices.ok(), qPrintable(errorText(data) + errorText(indices)));
    QCOMPARE(indices->dtype(), runtime::DataType::int64());
    // ArgMax over axis 0 (keepdims): each index points at its column's largest value.
    auto values = data->toVector<float>();
    auto argmax = indices->toVector<int64_t>();
    int64_t rows = data->shape()[0], columns = data->numElements() / rows;
    QCOMPARE(int64_t(argmax.size()), columns);
    for (int64_t c = 0; c < columns; ++c) {
      QVERIFY(argmax[c] >= 0 && argmax[c] < rows);
      for (int64_t r = 0; r < rows; ++r) QVERIFY(values[r * columns + c] <= values[argmax[c] * columns + c]);
    }
  }

  void readsFloat16TensorFiles() {
    REQUIRE_CONFORMANCE_DATA();
    const std::string test = "test_cast_FLOAT_to_FLOAT16";
    auto input = readTensorProtoFile(conformanceTensor(test, "input_0.pb"));
    auto output = readTensorProtoFile(conformanceTensor(test, "output_0.pb"));
    QVERIFY2(input.ok() && output.ok(), qPrintable(errorText(input) + errorText(output)));
    QCOMPARE(output->dtype(), runtime::DataType::float16());
    QCOMPARE(output->shape(), input->shape());
    auto floats = input->toVector<float>();
    auto* halves = static_cast<const uint16_t*>(output->data());
    for (size_t i = 0; i < floats.size(); ++i) {
      if (!std::isfinite(floats[i]) || std::fabs(floats[i]) > 65504 || std::fabs(floats[i]) < 1e-4) continue;
      QVERIFY(std::fabs(halfToDouble(halves[i]) - floats[i]) <= std::fabs(floats[i]) * 1e-3);
    }
  }

  void readsTypedFieldTensors_data() {
    QTest::addColumn<int>("elemType");
    QTest::newRow("float_data") << int(onnx::TensorProto::FLOAT);
    QTest::newRow("int64_data") << int(onnx::TensorProto::INT64);
    QTest::newRow("int32_data int8") << int(onnx::TensorProto::INT8);
    QTest::newRow("int32_data float16 bits") << int(onnx::TensorProto::FLOAT16);
    QTest::newRow("int32_data bool") << int(onnx::TensorProto::BOOL);
    QTest::newRow("double_data") << int(onnx::TensorProto::DOUBLE);
    QTest::newRow("uint64_data uint32") << int(onnx::TensorProto::UINT32);
  }
  void readsTypedFieldTensors() {
    QFETCH(int, elemType);
    onnx::TensorProto tensor;
    tensor.set_data_type(elemType);
    tensor.add_dims(2);
    tensor.add_dims(2);
    const std::vector<int> values = {0, 1, 1, 0};  // valid in every type (bool too)
    std::vector<double> expected;
    for (int v : values) {
      switch (elemType) {
        case onnx::TensorProto::FLOAT: tensor.add_float_data(float(v) * 1.5f); expected.push_back(v * 1.5); break;
        case onnx::TensorProto::DOUBLE: tensor.add_double_data(v * 2.25); expected.push_back(v * 2.25); break;
        case onnx::TensorProto::INT64: tensor.add_int64_data(-v * 7); expected.push_back(-v * 7); break;
        case onnx::TensorProto::UINT32: tensor.add_uint64_data(v * 9); expected.push_back(v * 9); break;
        case onnx::TensorProto::FLOAT16: tensor.add_int32_data(v ? 0x3c00 : 0); expected.push_back(v); break;
        default: {
          int stored = elemType == onnx::TensorProto::INT8 ? -3 * v : v;
          tensor.add_int32_data(stored);
          expected.push_back(stored);
        }
      }
    }
    QTemporaryDir dir;
    std::string path = dir.filePath("tensor.pb").toStdString();
    writeBytes(path, tensor.SerializeAsString());
    auto array = readTensorProtoFile(path);
    QVERIFY2(array.ok(), qPrintable(errorText(array)));
    QCOMPARE(array->shape(), (std::vector<int64_t>{2, 2}));
    std::vector<double> actual;
    for (int64_t i = 0; i < 4; ++i) {
      const void* p = array->data();
      switch (elemType) {
        case onnx::TensorProto::FLOAT: actual.push_back(static_cast<const float*>(p)[i]); break;
        case onnx::TensorProto::DOUBLE: actual.push_back(static_cast<const double*>(p)[i]); break;
        case onnx::TensorProto::INT64: actual.push_back(double(static_cast<const int64_t*>(p)[i])); break;
        case onnx::TensorProto::UINT32: actual.push_back(static_cast<const uint32_t*>(p)[i]); break;
        case onnx::TensorProto::FLOAT16: actual.push_back(halfToDouble(static_cast<const uint16_t*>(p)[i])); break;
        case onnx::TensorProto::INT8: actual.push_back(static_cast<const int8_t*>(p)[i]); break;
        default: actual.push_back(static_cast<const uint8_t*>(p)[i]);
      }
    }
    QCOMPARE(actual, expected);
  }

  void explainsBadTensorFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    onnx::TensorProto shortRaw;
    shortRaw.set_name("t");
    shortRaw.set_data_type(onnx::TensorProto::FLOAT);
    shortRaw.add_dims(3);
    shortRaw.set_raw_data(std::string(8, '\0'));
    onnx::TensorProto strings;
    strings.set_data_type(onnx::TensorProto::STRING);
    strings.add_string_data("a");
    std::string valid = shortRaw.SerializeAsString();
    QTest::newRow("raw size") << QByteArray::fromStdString(valid) << "tensor 't' has 8 bytes of raw_data but its dims and type need 12";
    QTest::newRow("strings") << QByteArray::fromStdString(strings.SerializeAsString()) << "string tensors are not supported";
    QTest::newRow("empty") << QByteArray() << "is empty";
    QTest::newRow("not protobuf") << QByteArray("\xff\xff\xff\xff garbage") << "is not an ONNX tensor";
  }
  void explainsBadTensorFiles() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    std::string path = dir.filePath("bad.pb").toStdString();
    writeBytes(path, bytes.toStdString());
    auto array = readTensorProtoFile(path);
    QVERIFY(!array.ok());
    QCOMPARE(array.error().location, path);
    QVERIFY2(errorText(array).contains(expected), qPrintable(errorText(array)));
  }

  void explainsSequenceFilesOfTheSuite_data() {
    QTest::addColumn<QString>("test");
    QTest::addColumn<QString>("file");
    QTest::newRow("sequence") << "test_identity_sequence" << "input_0.pb";
    QTest::newRow("optional sequence") << "test_identity_opt" << "input_0.pb";
    QTest::newRow("empty optional") << "test_optional_has_element_empty" << "input_0.pb";
  }
  void explainsSequenceFilesOfTheSuite() {
    REQUIRE_CONFORMANCE_DATA();
    QFETCH(QString, test);
    QFETCH(QString, file);
    std::string path = conformanceTensor(test.toStdString(), file.toStdString());
    auto array = readTensorProtoFile(path);
    QVERIFY(!array.ok());
    QCOMPARE(array.error().location, path);
    QVERIFY2(errorText(array).contains("sequence, map or optional value"), qPrintable(errorText(array)));
  }
};

QTEST_GUILESS_MAIN(TestOnnxTensorFiles)
#include "test_onnx_tensor_files.moc"
