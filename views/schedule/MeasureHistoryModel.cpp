// The table of one task's measured schedule variants.
#include "views/schedule/MeasureHistoryModel.h"

#include <QFont>
#include <QLocale>

namespace tessel::views {

namespace {
const std::vector<MeasuredVariant>& noVariants() {
  static const std::vector<MeasuredVariant> none;
  return none;
}

// Enough digits for a latency of microseconds to seconds, without a wall of decimals.
QString milliseconds(double ms) {
  if (ms >= 100) return QString::number(ms, 'f', 1);
  if (ms >= 1) return QString::number(ms, 'f', 3);
  return QString::number(ms, 'f', 4);
}
}  // namespace

MeasureHistoryModel::MeasureHistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

void MeasureHistoryModel::setHistory(MeasureHistory* history) {
  if (history_ == history) return;
  beginResetModel();
  if (history_) disconnect(history_, nullptr, this, nullptr);
  history_ = history;
  if (history_) {
    connect(history_, &MeasureHistory::variantAboutToBeAdded, this, [this](const QString& task) {
      if (task != task_) return;
      int row = int(variants().size());
      beginInsertRows({}, row, row);
    });
    connect(history_, &MeasureHistory::variantAdded, this, [this](const QString& task) {
      if (task != task_) return;
      endInsertRows();
      int best = history_->bestIndex(task_);
      if (best != best_) {
        // The old best row loses its mark and the new one gains it.
        int oldBest = best_;
        best_ = best;
        if (oldBest >= 0) emit dataChanged(index(oldBest, 0), index(oldBest, ColumnCount - 1));
        emit dataChanged(index(best, 0), index(best, ColumnCount - 1));
      }
    });
    connect(history_, &MeasureHistory::historyAboutToBeReset, this, [this](const QString& task) {
      if (task == task_) beginResetModel();
    });
    connect(history_, &MeasureHistory::historyReset, this, [this](const QString& task) {
      if (task != task_) return;
      best_ = history_->bestIndex(task_);
      endResetModel();
    });
  }
  best_ = history_ ? history_->bestIndex(task_) : -1;
  endResetModel();
}

void MeasureHistoryModel::setTask(const QString& task) {
  if (task == task_) return;
  beginResetModel();
  task_ = task;
  best_ = history_ ? history_->bestIndex(task_) : -1;
  endResetModel();
}

const std::vector<MeasuredVariant>& MeasureHistoryModel::variants() const {
  return history_ ? history_->variants(task_) : noVariants();
}

int MeasureHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(variants().size());
}

int MeasureHistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MeasureHistoryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const MeasuredVariant& variant = variants()[size_t(index.row())];
  bool best = index.row() == best_;
  switch (role) {
    case Qt::DisplayRole: return display(variant, index.column());
    case SortRole: return sortValue(variant, index.column());
    case IsBestRole: return best;
    case Qt::FontRole: {
      if (!best) return {};
      QFont font;
      font.setBold(true);
      return font;
    }
    case Qt::TextAlignmentRole:
      if (index.column() == ChangeColumn) return int(Qt::AlignLeft | Qt::AlignVCenter);
      return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
      const driver::Measurement& m = variant.measurement;
      QString schedule = variant.traceText.trimmed().isEmpty() ? QStringLiteral("(no primitives)") : variant.traceText;
      return QStringLiteral("<b>Variant %1</b>%2<br>median %3 ms, fastest %4 ms over %5 samples on %6 threads<br>"
                            "%7 GFLOP/s of a measured peak of %8<pre>%9</pre>")
          .arg(variant.number)
          .arg(best ? QStringLiteral(" (fastest so far)") : QString())
          .arg(milliseconds(m.medianMilliseconds), milliseconds(m.minMilliseconds))
          .arg(m.samples)
          .arg(m.threads)
          .arg(QString::number(m.gflops, 'f', 2), QString::number(m.peakGflops, 'f', 1), schedule.toHtmlEscaped());
    }
    default: return {};
  }
}

QVariant MeasureHistoryModel::display(const MeasuredVariant& variant, int column) const {
  const driver::Measurement& m = variant.measurement;
  switch (column) {
    case NumberColumn: return QString::number(variant.number);
    case TimeColumn: return QLocale().toString(variant.measuredAt.time(), QLocale::ShortFormat);
    case LatencyColumn: return milliseconds(m.medianMilliseconds);
    case MinLatencyColumn: return milliseconds(m.minMilliseconds);
    case GflopsColumn: return QString::number(m.gflops, 'f', m.gflops >= 100 ? 1 : 2);
    case PeakColumn: return QString::number(100 * m.fractionOfPeak, 'f', 1) + QStringLiteral(" %");
    case ChangeColumn: return variant.change;
    default: return {};
  }
}

QVariant MeasureHistoryModel::sortValue(const MeasuredVariant& variant, int column) const {
  const driver::Measurement& m = variant.measurement;
  switch (column) {
    case NumberColumn: return variant.number;
    case TimeColumn: return variant.measuredAt;
    case LatencyColumn: return m.medianMilliseconds;
    case MinLatencyColumn: return m.minMilliseconds;
    case GflopsColumn: return m.gflops;
    case PeakColumn: return m.fractionOfPeak;
    case ChangeColumn: return variant.change;
    default: return {};
  }
}

QVariant MeasureHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case NumberColumn: return tr("#");
      case TimeColumn: return tr("Time");
      case LatencyColumn: return tr("Latency (ms)");
      case MinLatencyColumn: return tr("Fastest (ms)");
      case GflopsColumn: return tr("GFLOP/s");
      case PeakColumn: return tr("Of peak");
      case ChangeColumn: return tr("Change");
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case LatencyColumn: return tr("Median time of one call");
      case MinLatencyColumn: return tr("Fastest sample: what the kernel does undisturbed");
      case GflopsColumn: return tr("Floating-point operations per second at the median latency");
      case PeakColumn: return tr("Share of this machine's measured float32 FMA peak");
      case ChangeColumn: return tr("How the schedule differs from the previous variant");
      default: return {};
    }
  }
  return {};
}

}  // namespace tessel::views
