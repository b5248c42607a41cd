// Runtime element types: text round trip, rejected spellings, sizes, C++ type mapping.
#include <QtTest>

#include "runtime/DataType.h"

using namespace tessel::runtime;

Q_DECLARE_METATYPE(DataType)

class TestDataType : public QObject {
  Q_OBJECT
private slots:
  void textRoundTrips_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<DataType>("type");
    QTest::addColumn<int>("bytes");
    QTest::newRow("float32") << "float32" << DataType::float32() << 4;
    QTest::newRow("float16") << "float16" << DataType::float16() << 2;
    QTest::newRow("float64") << "float64" << DataType::float64() << 8;
    QTest::newRow("bfloat16") << "bfloat16" << DataType::bfloat16() << 2;
    QTest::newRow("int8") << "int8" << DataType::int8() << 1;
    QTest::newRow("int64") << "int64" << DataType::int64() << 8;
    QTest::newRow("uint8") << "uint8" << DataType::uint8() << 1;
    QTest::newRow("bool") << "bool" << DataType::boolean() << 1;
    QTest::newRow("vector") << "float32x8" << DataType{DataType::Code::Float, 32, 8} << 32;
    QTest::newRow("bool vector") << "boolx4" << DataType{DataType::Code::Bool, 1, 4} << 4;
  }
  void textRoundTrips() {
    QFETCH(QString, text);
    QFETCH(DataType, type);
    QFETCH(int, bytes);
    QCOMPARE(QString::fromStdString(type.toString()), text);
    std::optional<DataType> parsed = DataType::parse(text.toStdString());
    QVERIFY(parsed.has_value());
    QVERIFY(*parsed == type);
    QCOMPARE(type.bytes(), int64_t(bytes));
  }

  void rejectsWhatIsNotAType_data() {
    QTest::addColumn<QString>("text");
    for (const char* text : {"", "float", "int7", "float8", "bfloat32", "uint", "float32x0", "float32x", "int32x4y",
                             "Float32", "float32 ", "x4", "handle", "int32x-1"})
      QTest::newRow(text) << text;
  }
  void rejectsWhatIsNotAType() {
    QFETCH(QString, text);
    QVERIFY(!DataType::parse(text.toStdString()).has_value());
  }

  void cppTypesMapToTheirElementTypes() {
    QVERIFY(*dataTypeOf<float>() == DataType::float32());
    QVERIFY(*dataTypeOf<double>() == DataType::float64());
    QVERIFY(*dataTypeOf<int8_t>() == DataType::int8());
    QVERIFY(*dataTypeOf<uint8_t>() == DataType::uint8());
    QVERIFY(*dataTypeOf<int32_t>() == DataType::int32());
    QVERIFY(*dataTypeOf<int64_t>() == DataType::int64());
    QVERIFY(*dataTypeOf<bool>() == DataType::boolean());
    QVERIFY(!dataTypeOf<std::string>().has_value());
  }
};

QTEST_GUILESS_MAIN(TestDataType)
#include "test_data_type.moc"
