// Reading the quantize report with QJson (the views' JSON), tolerant of absent fields.
#include "views/quantization/QuantizationReport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace tessel::views {

namespace {

std::optional<double> optionalNumber(const QJsonValue& value) {
  return value.isDouble() ? std::optional<double>(value.toDouble()) : std::nullopt;
}

QuantizedTensorReport tensorOf(const QJsonObject& json) {
  QuantizedTensorReport t;
  t.tensor = json["tensor"].toString();
  t.quantized = json["quantized"].toBool(true);
  t.min = json["min"].toDouble();
  t.max = json["max"].toDouble();
  QJsonArray clip = json["clip"].toArray();
  t.clipLow = clip.size() == 2 ? clip[0].toDouble() : t.min;
  t.clipHigh = clip.size() == 2 ? clip[1].toDouble() : t.max;
  t.scale = json["scale"].toDouble();
  t.zeroPoint = json["zero_point"].toInt();
  QJsonObject histogram = json["histogram"].toObject();
  t.histogramMaxAbs = histogram["max_abs"].toDouble();
  for (const QJsonValue& count : histogram["counts"].toArray()) t.histogramCounts.push_back(count.toDouble());
  return t;
}

}  // namespace

Expected<QuantizationReport> parseQuantizationReport(const QByteArray& json, const QString& source) {
  QJsonParseError error;
  QJsonDocument document = QJsonDocument::fromJson(json, &error);
  if (document.isNull() || !document.isObject())
    return Diagnostic{"the quantization report is not JSON: " + error.errorString().toStdString(), source.toStdString(),
                      0, 0, "run tessel quantize --report again"};
  QJsonObject root = document.object();
  if (!root["layers"].isArray())
    return Diagnostic{"the quantization report has no layers", source.toStdString(), 0, 0, ""};
  QuantizationReport report;
  report.model = root["model"].toString();
  report.output = root["output"].toString();
  report.method = root["method"].toString();
  report.perChannel = root["per_channel"].toBool();
  report.calibrationSamples = root["calibration_samples"].toInt();
  for (const QJsonValue& value : root["layers"].toArray()) {
    QJsonObject layer = value.toObject();
    QuantizedLayerReport l;
    l.node = layer["node"].toString();
    l.op = layer["op"].toString(QStringLiteral("Conv"));
    l.relu = layer["relu"].toString();
    l.dynamic = layer["dynamic"].toBool();
    l.input = tensorOf(layer["input"].toObject());
    l.output = tensorOf(layer["output"].toObject());
    l.sqnrDb = optionalNumber(layer["sqnr_db"]);
    report.layers.push_back(std::move(l));
  }
  QJsonArray outputs = root["outputs"].toArray();
  if (!outputs.isEmpty()) report.outputSqnrDb = optionalNumber(outputs[0].toObject()["sqnr_db"]);
  report.top1Agreement = optionalNumber(root["top1_agreement"]);
  report.top5Agreement = optionalNumber(root["top5_agreement"]);
  return report;
}

}  // namespace tessel::views
