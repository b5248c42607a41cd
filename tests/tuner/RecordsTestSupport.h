// Making tuning records and record files in the records tests.
#pragma once

#include <QFile>
#include <QString>

#include <string>
#include <vector>

#include "tuner/records/TuningRecord.h"

namespace testing {

inline const std::string kTarget =
    "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma -vector-bits=256 -cores=2";
inline const std::string kConv = "conv2d|in=1x64x56x56:float32:NCHW|w=64x64x3x3|stride=1|pad=1";
inline const std::string kDense = "dense|in=1x512:float32|w=1000x512";

/// Splits of the default schedules whose factor a test changes to get another valid schedule:
/// the pixels of a convolution's register tile, and a matmul's reduction.
inline const std::string kConvPixelSplit = "xo, xi = split(conv, x, ";
inline const std::string kMatmulReductionSplit = "ko, ki = split(C.local, k, ";

/// `trace` with the factor of its split `split` (kConvPixelSplit) made `to`: another valid
/// schedule (a split need not divide its loop). The defaults' factors follow the machine's
/// vector width, so a split is named by its loop, not by its factor.
inline std::string withFactor(std::string trace, const std::string& split, const std::string& to) {
  size_t at = trace.find(split + "factor=");
  if (at == std::string::npos) qFatal("no %sfactor=... in\n%s", split.c_str(), trace.c_str());
  at += split.size() + 7;
  size_t end = trace.find(')', at);
  if (trace.substr(at, end - at) == to) qFatal("%sfactor=%s is the default already", split.c_str(), to.c_str());
  return trace.replace(at, end - at, to);
}

/// A successful measurement of `workload` on `target` taking `medianMs`.
inline tessel::tuner::TuningRecord measured(const std::string& workload, double medianMs,
                                            const std::string& target = kTarget,
                                            tessel::tuner::RecordOrigin origin = tessel::tuner::RecordOrigin::Search,
                                            const std::string& trace = "split(i, 8)\nvectorize(i.inner)") {
  tessel::tuner::TuningRecord record;
  record.workload = workload;
  record.workloadHash = workload == kConv ? "0123456789abcdef" : "fedcba9876543210";
  record.task = workload == kConv ? "fused_Conv_Relu_3" : "fused_Dense_7";
  record.target = target;
  record.trace = trace;
  record.origin = origin;
  record.round = 1;
  record.outcome = tessel::tuner::MeasuredTime{medianMs, medianMs * 0.9, medianMs * 1.2, 10, 100.0 / medianMs};
  record.time = "2026-11-25T12:34:56Z";
  return record;
}

/// A failed measurement of `workload` on `target`.
inline tessel::tuner::TuningRecord failed(
    const std::string& workload, const std::string& target = kTarget,
    tessel::tuner::MeasureErrorKind kind = tessel::tuner::MeasureErrorKind::Crash) {
  tessel::tuner::TuningRecord record = measured(workload, 1, target);
  record.outcome = tessel::tuner::MeasureFailure{kind, "signal 11 (segmentation fault)"};
  return record;
}

/// The records as a file's text: one JSON line each.
inline std::string linesOf(const std::vector<tessel::tuner::TuningRecord>& records) {
  std::string text;
  for (auto& record : records) text += tessel::tuner::toJsonLine(record) + "\n";
  return text;
}

inline void writeText(const QString& path, const std::string& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) qFatal("cannot write %s", qPrintable(path));
  file.write(text.data(), qint64(text.size()));
}

inline std::string readText(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return "<unreadable>";
  return file.readAll().toStdString();
}

}  // namespace testing
