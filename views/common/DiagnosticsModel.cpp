// DiagnosticsModel: a bounded, append-only table of diagnostics.
#include "views/common/DiagnosticsModel.h"

#include <QApplication>
#include <QStyle>

#include <algorithm>

#include "views/common/Theme.h"

namespace tessel::views {

namespace {

QString severityName(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return QObject::tr("Error");
    case Severity::Warning:
      return QObject::tr("Warning");
    case Severity::Note:
      break;
  }
  return QObject::tr("Note");
}

}  // namespace

DiagnosticsModel::DiagnosticsModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiagnosticsModel::add(DiagnosticEntry entry) {
  if (entry.time.isNull()) entry.time = QDateTime::currentDateTime();
  if (static_cast<int>(entries_.size()) >= maximumEntries()) {
    beginRemoveRows({}, 0, 0);
    entries_.erase(entries_.begin());
    endRemoveRows();
  }
  int at = static_cast<int>(entries_.size());
  beginInsertRows({}, at, at);
  entries_.push_back(std::move(entry));
  endInsertRows();
  emit entryAdded(entries_.back());
}

void DiagnosticsModel::add(Severity severity, const QString& source, const QString& message) {
  add(DiagnosticEntry{severity, source, message, {}});
}

void DiagnosticsModel::clear() {
  beginResetModel();
  entries_.clear();
  endResetModel();
}

int DiagnosticsModel::errorCount() const {
  return static_cast<int>(std::count_if(entries_.begin(), entries_.end(),
                                        [](const DiagnosticEntry& e) { return e.severity == Severity::Error; }));
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const DiagnosticEntry& e = entries_[index.row()];
  if (role == FullMessageRole || role == Qt::ToolTipRole) return e.message;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case SeverityColumn:
        return severityName(e.severity);
      case TimeColumn:
        return e.time.toString("HH:mm:ss");
      case SourceColumn:
        return e.source;
      case MessageColumn:
        return e.message.section('\n', 0, 0);
      default:
        return {};
    }
  }
  if (role == Qt::DecorationRole && index.column() == SeverityColumn) {
    // Icons need a QApplication; a model tested under QCoreApplication goes without.
    if (!qobject_cast<QApplication*>(QCoreApplication::instance())) return {};
    QStyle* style = QApplication::style();
    switch (e.severity) {
      case Severity::Error:
        return style->standardIcon(QStyle::SP_MessageBoxCritical);
      case Severity::Warning:
        return style->standardIcon(QStyle::SP_MessageBoxWarning);
      case Severity::Note:
        return style->standardIcon(QStyle::SP_MessageBoxInformation);
    }
  }
  if (role == Qt::ForegroundRole && index.column() == SeverityColumn && e.severity != Severity::Note) {
    ThemeColors colors = themeColors(QApplication::palette());
    return e.severity == Severity::Error ? colors.error : colors.warning;
  }
  return {};
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case SeverityColumn:
      return tr("Severity");
    case TimeColumn:
      return tr("Time");
    case SourceColumn:
      return tr("Source");
    case MessageColumn:
      return tr("Message");
    default:
      return {};
  }
}

}  // namespace tessel::views
