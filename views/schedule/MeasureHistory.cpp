// The measured variants of every task's schedule, and how one schedule differs from the last.
#include "views/schedule/MeasureHistory.h"

#include <QJsonArray>

#include <algorithm>

namespace tessel::views {

namespace {

// Longest change label spelled out primitive by primitive; longer ones are counted instead.
constexpr int kMaxSpelledChange = 64;

// The primitives of schedule text, one per line, without comments or blank lines.
QStringList primitiveLines(const QString& text) {
  QStringList lines;
  for (QString line : text.split('\n')) {
    int comment = line.indexOf('#');
    if (comment >= 0) line.truncate(comment);
    line = line.simplified();
    if (!line.isEmpty()) lines << line;
  }
  return lines;
}

// Lines of `from` missing in `to`, each as often as it is missing (multiset difference).
QStringList missingFrom(QStringList from, const QStringList& to) {
  for (const QString& line : to) from.removeOne(line);
  return from;
}

// "split(C, i, factor=8 → 16)" when `before` and `after` are the same primitive call with one
// stretch of arguments changed; empty otherwise.
QString describeEditedPrimitive(const QString& before, const QString& after) {
  int open = before.indexOf('(');
  if (open < 0 || before.left(open + 1) != after.left(open + 1)) return {};
  int prefix = 0;
  while (prefix < before.size() && prefix < after.size() && before[prefix] == after[prefix]) ++prefix;
  int suffix = 0;
  while (suffix < before.size() - prefix && suffix < after.size() - prefix &&
         before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
    ++suffix;
  // Whole arguments read better than digits: widen the changed stretch to argument boundaries.
  auto isBoundary = [](QChar c) { return c == '(' || c == ',' || c == '=' || c == ' ' || c == ')'; };
  while (prefix > 0 && !isBoundary(before[prefix - 1])) --prefix;
  while (suffix > 0 && !isBoundary(before[before.size() - suffix])) --suffix;
  if (prefix <= open) return {};
  return before.left(prefix) + before.mid(prefix, before.size() - prefix - suffix) + QStringLiteral(" → ") +
         after.mid(prefix, after.size() - prefix - suffix) + before.right(suffix);
}

}  // namespace

QString describeScheduleChange(const QString* previous, const QString& current) {
  QStringList now = primitiveLines(current);
  if (!previous) return now.isEmpty() ? QStringLiteral("default schedule") : QStringLiteral("first measurement");
  QStringList before = primitiveLines(*previous);
  if (before == now) return QStringLiteral("unchanged");
  QStringList added = missingFrom(now, before);
  QStringList removed = missingFrom(before, now);
  if (added.isEmpty() && removed.isEmpty()) return QStringLiteral("reordered primitives");
  QStringList parts;
  if (removed.size() == added.size()) {
    // Primitives edited in place (a factor, an axis) read as one change each.
    for (int i = 0; i < removed.size(); ++i) {
      QString edited = describeEditedPrimitive(removed[i], added[i]);
      if (edited.isEmpty()) {
        parts.clear();
        break;
      }
      parts << edited;
    }
  }
  if (parts.isEmpty()) {
    for (const QString& line : removed) parts << QStringLiteral("- ") + line;
    for (const QString& line : added) parts << QStringLiteral("+ ") + line;
  }
  QString spelled = parts.join(QStringLiteral("; "));
  if (spelled.size() <= kMaxSpelledChange) return spelled;
  QStringList counts;
  if (!added.isEmpty()) counts << QStringLiteral("+%1").arg(added.size());
  if (!removed.isEmpty()) counts << QStringLiteral("-%1").arg(removed.size());
  return counts.join(' ') + (added.size() + removed.size() == 1 ? QStringLiteral(" primitive")
                                                                 : QStringLiteral(" primitives"));
}

MeasureHistory::MeasureHistory(QObject* parent) : QObject(parent) {}

const MeasuredVariant& MeasureHistory::add(const QString& task, const QString& traceText,
                                           const driver::Measurement& measurement, const QDateTime& measuredAt) {
  std::vector<MeasuredVariant>& list = variants_[task];
  MeasuredVariant variant;
  variant.number = list.empty() ? 1 : list.back().number + 1;
  variant.measuredAt = measuredAt;
  variant.traceText = traceText;
  variant.change = describeScheduleChange(list.empty() ? nullptr : &list.back().traceText, traceText);
  variant.measurement = measurement;
  emit variantAboutToBeAdded(task);
  list.push_back(std::move(variant));
  emit variantAdded(task);
  return variants_[task].back();
}

void MeasureHistory::restore(const QString& task, std::vector<MeasuredVariant> variants) {
  emit historyAboutToBeReset(task);
  if (variants.empty())
    variants_.erase(task);
  else
    variants_[task] = std::move(variants);
  emit historyReset(task);
}

void MeasureHistory::clear(const QString& task) { restore(task, {}); }

const std::vector<MeasuredVariant>& MeasureHistory::variants(const QString& task) const {
  static const std::vector<MeasuredVariant> none;
  auto found = variants_.find(task);
  return found == variants_.end() ? none : found->second;
}

QStringList MeasureHistory::tasks() const {
  QStringList names;
  for (const auto& [name, list] : variants_)
    if (!list.empty()) names << name;
  return names;
}

QJsonObject MeasureHistory::toJson() const {
  QJsonObject json;
  for (const auto& [task, list] : variants_) {
    QJsonArray array;
    for (const MeasuredVariant& v : list) {
      const driver::Measurement& m = v.measurement;
      array.append(QJsonObject{{"number", v.number},
                               {"measuredAt", v.measuredAt.toString(Qt::ISODate)},
                               {"trace", v.traceText},
                               {"change", v.change},
                               {"kernel", QString::fromStdString(m.kernelName)},
                               {"medianMs", m.medianMilliseconds},
                               {"minMs", m.minMilliseconds},
                               {"samples", m.samples},
                               {"flops", m.flops},
                               {"gflops", m.gflops},
                               {"peakGflops", m.peakGflops},
                               {"threads", m.threads}});
    }
    if (!array.isEmpty()) json.insert(task, array);
  }
  return json;
}

int MeasureHistory::restoreFromJson(const QJsonObject& json) {
  int read = 0;
  for (auto it = json.begin(); it != json.end(); ++it) {
    std::vector<MeasuredVariant> list;
    for (const QJsonValue& value : it.value().toArray()) {
      QJsonObject o = value.toObject();
      MeasuredVariant v;
      v.measurement.medianMilliseconds = o.value("medianMs").toDouble();
      if (!(v.measurement.medianMilliseconds > 0)) continue;
      v.number = o.value("number").toInt(int(list.size()) + 1);
      v.measuredAt = QDateTime::fromString(o.value("measuredAt").toString(), Qt::ISODate);
      v.traceText = o.value("trace").toString();
      v.change = o.value("change").toString();
      driver::Measurement& m = v.measurement;
      m.kernelName = o.value("kernel").toString().toStdString();
      m.minMilliseconds = o.value("minMs").toDouble(m.medianMilliseconds);
      m.samples = o.value("samples").toInt();
      m.flops = o.value("flops").toDouble();
      m.gflops = o.value("gflops").toDouble();
      m.peakGflops = o.value("peakGflops").toDouble();
      m.fractionOfPeak = m.peakGflops > 0 ? m.gflops / m.peakGflops : 0;
      m.threads = o.value("threads").toInt(1);
      list.push_back(std::move(v));
    }
    read += int(list.size());
    restore(it.key(), std::move(list));
  }
  return read;
}

int MeasureHistory::bestIndex(const QString& task) const {
  const std::vector<MeasuredVariant>& list = variants(task);
  if (list.empty()) return -1;
  auto best = std::min_element(list.begin(), list.end(), [](const MeasuredVariant& a, const MeasuredVariant& b) {
    return a.measurement.medianMilliseconds < b.measurement.medianMilliseconds;
  });
  return int(best - list.begin());
}

}  // namespace tessel::views
