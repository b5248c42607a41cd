// The Studio's log of diagnostics: compiler errors (with the file/node/line the compiler
// named), warnings and notes from every view, newest last, as a table model.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>

#include <vector>

namespace tessel::views {

enum class Severity { Note, Warning, Error };

/// One entry: what happened, where it came from ("Open", "Compile", "Export", a view's name).
struct DiagnosticEntry {
  Severity severity = Severity::Note;
  QString source;
  /// The full text, as the compiler wrote it ("model.onnx: node 'conv1' (Conv): ..."); may span
  /// lines. The table shows the first line, the tool tip and details view all of it.
  QString message;
  QDateTime time;
};

/// Columns: severity, time, source, message. Keeps at most maximumEntries() entries.
class DiagnosticsModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { SeverityColumn, TimeColumn, SourceColumn, MessageColumn, ColumnCount };
  /// Qt::UserRole on any column: the whole message.
  static constexpr int FullMessageRole = Qt::UserRole + 1;

  explicit DiagnosticsModel(QObject* parent = nullptr);

  /// Appends an entry (time stamped now when `entry.time` is null).
  void add(DiagnosticEntry entry);
  void add(Severity severity, const QString& source, const QString& message);
  void clear();
  const DiagnosticEntry& entry(int row) const { return entries_.at(row); }
  int errorCount() const;
  static int maximumEntries() { return 1000; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
  /// After an entry was added (for badges and "show the log on error").
  void entryAdded(const tessel::views::DiagnosticEntry& entry);

private:
  std::vector<DiagnosticEntry> entries_;
};

}  // namespace tessel::views
