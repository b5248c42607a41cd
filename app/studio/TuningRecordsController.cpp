// TuningRecordsController: records read off the GUI thread, problems shown, outcomes noted.
#include "app/studio/TuningRecordsController.h"

#include <QFileInfo>
#include <QMessageBox>
#include <QStringList>

namespace tessel::studio {

namespace {
const QString kRecordsChannel = QStringLiteral("tuning-records");
// A message box is no place for a long list: the log has every line.
constexpr size_t kProblemsInNotice = 5;
}  // namespace

TuningRecordsController::TuningRecordsController(QWidget* dialogParent, QObject* parent)
    : QObject(parent), dialogParent_(dialogParent) {
  notice_ = [this](const QString& title, const QString& text) { QMessageBox::warning(dialogParent_, title, text); };
}

void TuningRecordsController::load(const QString& path, const Target& target, Loaded then) {
  using Records = std::shared_ptr<Expected<tuner::AppliedRecords>>;
  jobs_.start<Records>(
      kRecordsChannel, tr("Reading the tuning records %1").arg(QFileInfo(path).fileName()),
      [file = path.toStdString(), target](views::JobContext&) {
        return std::make_shared<Expected<tuner::AppliedRecords>>(tuner::loadTuningRecords(file, target));
      },
      [this, then = std::move(then)](Records records) { then(accept(std::move(*records))); });
}

std::shared_ptr<const driver::TunedSchedules> TuningRecordsController::accept(Expected<tuner::AppliedRecords> records) {
  if (!records) {
    QString message = QString::fromStdString(records.error().toString());
    emit diagnostic(views::Severity::Error, tr("Tuning Records"), message);
    notice_(tr("Tuning Records"), tr("The tuning records were not applied; the model keeps its default schedules.\n\n%1")
                                      .arg(message));
    return nullptr;
  }
  accepted_ = std::make_shared<tuner::AppliedRecords>(std::move(*records));
  const auto& problems = accepted_->problems;
  if (!problems.empty()) {
    QStringList lines;
    for (size_t i = 0; i < problems.size() && i < kProblemsInNotice; ++i)
      lines << QString::fromStdString(problems[i].describe());
    if (problems.size() > kProblemsInNotice) lines << tr("... and %1 more").arg(problems.size() - kProblemsInNotice);
    QString file = QString::fromStdString(accepted_->path);
    QString what = problems.size() == 1 ? tr("A line of %1 could not be read and was skipped").arg(file)
                                        : tr("%1 lines of %2 could not be read and were skipped").arg(problems.size()).arg(file);
    notice_(tr("Tuning Records"), tr("%1; the other records are applied.\n\n%2").arg(what, lines.join('\n')));
  }
  return accepted_->schedules;
}

void TuningRecordsController::compiled(const driver::CompiledModel& model,
                                       const std::shared_ptr<const driver::TunedSchedules>& schedules) {
  if (!schedules) {
    applied_.reset();
    return;
  }
  if (accepted_ && accepted_->schedules == schedules && applied_ != accepted_) {
    applied_ = accepted_;
    reported_ = false;
  }
  if (!applied_ || applied_->schedules != schedules) return;
  tuner::noteCompiledModel(*applied_, model);
  if (reported_) return;
  // The first compile with these records says all of it; later ones (other pass options) show
  // in the status bar only.
  reported_ = true;
  QStringList lines;
  for (const std::string& line : tuner::describeAppliedRecords(*applied_)) lines << QString::fromStdString(line);
  bool problems = !applied_->problems.empty() || !applied_->outcome->notes.empty();
  emit diagnostic(problems ? views::Severity::Warning : views::Severity::Note, tr("Tuning Records"), lines.join('\n'));
}

QString TuningRecordsController::summary() const {
  if (!applied_ || !applied_->outcome) return {};
  return tr("%1 of %2 kernels tuned").arg(applied_->outcome->tunedKernels).arg(applied_->outcome->kernels);
}

}  // namespace tessel::studio
