// The lowering panel: code tabs, the step selector, stale dimming and loop highlights.
#include "views/schedule/LoweringPanel.h"

#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTabWidget>
#include <QTextBlock>
#include <QVBoxLayout>

#include "views/common/Theme.h"
#include "views/schedule/CodeHighlighter.h"

namespace tessel::views {

namespace {

QPlainTextEdit* makeCodeView(const QString& objectName) {
  auto* view = new QPlainTextEdit;
  view->setObjectName(objectName);
  view->setReadOnly(true);
  view->setLineWrapMode(QPlainTextEdit::NoWrap);
  view->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  view->setMouseTracking(true);
  QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  font.setPointSizeF(std::max(font.pointSizeF(), 10.0));
  view->setFont(font);
  view->setFrameShape(QFrame::NoFrame);
  return view;
}

/// Replaces a view's text only when it changed, so scroll position survives re-lowering that
/// produced the same code (most keystrokes inside a comment, or a no-op edit).
void setCode(QPlainTextEdit* view, const QString& text) {
  if (view->toPlainText() == text) return;
  int scroll = view->verticalScrollBar() ? view->verticalScrollBar()->value() : 0;
  view->setPlainText(text);
  view->verticalScrollBar()->setValue(scroll);
}

// A tab of `view` under a bar for its controls (the Steps and GPU tabs); `bar` is set to it.
QWidget* codeUnderBar(QPlainTextEdit* view, QHBoxLayout*& bar) {
  auto* tab = new QWidget;
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  bar = new QHBoxLayout;
  bar->setContentsMargins(6, 4, 6, 4);
  layout->addLayout(bar);
  layout->addWidget(view);
  return tab;
}

QSet<QString> loopNamesOf(const driver::TaskLowering& lowering) {
  QSet<QString> names;
  auto collect = [&](const std::vector<driver::StageLoops>& stages) {
    for (auto& stage : stages)
      for (auto& loop : stage.allLoops) names.insert(QString::fromStdString(loop));
  };
  collect(lowering.initialStages);
  for (auto& stages : lowering.stagesAfter) collect(stages);
  return names;
}

}  // namespace

LoweringPanel::LoweringPanel(QWidget* parent)
    : QWidget(parent),
      tabs_(new QTabWidget(this)),
      loopNest_(makeCodeView(QStringLiteral("loopNest"))),
      stepSelector_(new QComboBox),
      stepTiming_(new QLabel),
      stepText_(makeCodeView(QStringLiteral("stepText"))),
      llvm_(makeCodeView(QStringLiteral("llvmIR"))),
      assembly_(makeCodeView(QStringLiteral("assembly"))),
      gpuTarget_(new QComboBox),
      gpu_(makeCodeView(QStringLiteral("gpuCode"))) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  tabs_->setDocumentMode(true);
  layout->addWidget(tabs_);

  tabs_->addTab(loopNest_, tr("Loop nest"));
  QHBoxLayout* stepBar = nullptr;
  QWidget* steps = codeUnderBar(stepText_, stepBar);
  stepBar->addWidget(new QLabel(tr("After step:")));
  stepSelector_->setObjectName(QStringLiteral("stepSelector"));
  stepSelector_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  stepBar->addWidget(stepSelector_);
  stepBar->addStretch();
  stepTiming_->setForegroundRole(QPalette::PlaceholderText);
  stepBar->addWidget(stepTiming_);
  tabs_->addTab(steps, tr("Steps"));
  tabs_->addTab(llvm_, tr("LLVM IR"));
  tabs_->addTab(assembly_, tr("Assembly"));
  // The schedule lowered for a GPU: what bind() does, shown as the device code.
  QHBoxLayout* gpuBar = nullptr;
  QWidget* gpu = codeUnderBar(gpu_, gpuBar);
  gpuBar->addWidget(new QLabel(tr("Target:")));
  gpuTarget_->setObjectName(QStringLiteral("gpuTargetSelector"));
  gpuTarget_->addItem(tr("OpenCL"), QStringLiteral("opencl"));
  gpuTarget_->addItem(tr("CUDA sm_80"), QStringLiteral("cuda -arch=sm_80"));
  gpuTarget_->addItem(tr("CUDA sm_90"), QStringLiteral("cuda -arch=sm_90"));
  gpuBar->addWidget(gpuTarget_);
  gpuBar->addStretch();
  tabs_->addTab(gpu, tr("GPU"));
  connect(gpuTarget_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    if (wantsGpuCode()) emit codeWanted();
  });

  // Highlighters belong to their documents, which setPlainText keeps.
  highlighters_ = {new CodeHighlighter(loopNest_->document(), CodeHighlighter::Language::LoopIR, palette()),
                   new CodeHighlighter(stepText_->document(), CodeHighlighter::Language::LoopIR, palette()),
                   new CodeHighlighter(llvm_->document(), CodeHighlighter::Language::LlvmIR, palette()),
                   new CodeHighlighter(assembly_->document(), CodeHighlighter::Language::Assembly, palette())};
  connect(stepSelector_, qOverload<int>(&QComboBox::currentIndexChanged), this, &LoweringPanel::showStep);
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if ((wantsLlvmIR() && lowering_ && !lowering_->llvmIR) || (wantsAssembly() && lowering_ && !lowering_->assembly) ||
        (wantsGpuCode() && lowering_ && !lowering_->gpuSource))
      emit codeWanted();
  });
  connect(loopNest_, &QPlainTextEdit::cursorPositionChanged, this,
          [this] { pointAtLoopNestLine(loopNest_->textCursor().blockNumber()); });
  loopNest_->viewport()->installEventFilter(this);
  llvm_->viewport()->installEventFilter(this);
  assembly_->viewport()->installEventFilter(this);
  connect(assembly_, &QPlainTextEdit::cursorPositionChanged, this,
          [this] { pointAtAssemblyLine(assembly_->textCursor().blockNumber()); });
  connect(llvm_, &QPlainTextEdit::cursorPositionChanged, this,
          [this] { pointAtLlvmLine(llvm_->textCursor().blockNumber()); });
}

void LoweringPanel::setLowering(std::shared_ptr<const driver::TaskLowering> lowering, const QString& functionName) {
  lowering_ = std::move(lowering);
  if (!lowering_) {
    linking_ = {};
    for (auto* view : {loopNest_, stepText_, llvm_, assembly_, gpu_}) view->clear();
    stepSelector_->clear();
    return;
  }
  linking_ = LoopLinking(lowering_->trace, QString::fromStdString(lowering_->loopNest), loopNamesOf(*lowering_),
                         functionName);
  setCode(loopNest_, QString::fromStdString(lowering_->loopNest));

  int previousStep = stepSelector_->currentIndex();
  {
    QSignalBlocker block(stepSelector_);
    stepSelector_->clear();
    for (size_t i = 0; i < lowering_->steps.size(); ++i)
      stepSelector_->addItem(QStringLiteral("%1. %2").arg(i + 1).arg(QString::fromStdString(lowering_->steps[i].name)));
    int count = int(lowering_->steps.size());
    stepSelector_->setCurrentIndex(previousStep >= 0 && previousStep < count ? previousStep : count - 1);
  }
  showStep(stepSelector_->currentIndex());

  const QString pending = tr("; emitted while this tab is open");
  setCode(llvm_, lowering_->llvmIR ? QString::fromStdString(*lowering_->llvmIR) : pending);
  setCode(assembly_, lowering_->assembly ? QString::fromStdString(*lowering_->assembly) : QString(pending).replace(';', '#'));
  setCode(gpu_, lowering_->gpuSource ? QString::fromStdString(*lowering_->gpuSource) : QString(pending).replace(';', "//"));
  highlightLoops(highlighted_);
}

void LoweringPanel::showStep(int index) {
  if (!lowering_ || index < 0 || index >= int(lowering_->steps.size())) {
    stepText_->clear();
    stepTiming_->clear();
    return;
  }
  const auto& step = lowering_->steps[size_t(index)];
  QString text = QString::fromStdString(step.text);
  setCode(stepText_, text);
  // What this step changed: lines the previous step's IR does not have (as a multiset, so a
  // line that only moved is not marked; good enough to see what a pass touched).
  QList<LineRange> changed;
  if (index > 0) {
    QHash<QString, int> before;
    for (const QString& line : QString::fromStdString(lowering_->steps[size_t(index) - 1].text).split('\n'))
      ++before[line.trimmed()];
    QStringList lines = text.split('\n');
    for (int i = 0; i < lines.size(); ++i) {
      int& count = before[lines[i].trimmed()];
      if (count > 0) --count;
      else if (!lines[i].trimmed().isEmpty()) changed << LineRange{i, i};
    }
  }
  changedStepLines_ = changed.size();
  bool dark = palette().color(QPalette::Base).lightness() < 128;
  QList<QTextEdit::ExtraSelection> selections;
  for (const LineRange& range : changed) {
    QTextEdit::ExtraSelection selection;
    selection.format.setBackground(dark ? QColor(0x3f, 0xb9, 0x50, 50) : QColor(0x2d, 0xa4, 0x4e, 40));
    selection.format.setProperty(QTextFormat::FullWidthSelection, true);
    selection.cursor = QTextCursor(stepText_->document()->findBlockByNumber(range.first));
    selections << selection;
  }
  stepText_->setExtraSelections(selections);
  stepTiming_->setText(index > 0 ? tr("%1 ms \u00b7 %n line(s) changed", nullptr, int(changed.size()))
                                       .arg(step.milliseconds, 0, 'f', 3)
                                 : tr("%1 ms").arg(step.milliseconds, 0, 'f', 3));
}

void LoweringPanel::setStale(bool stale) {
  stale_ = stale;
  for (auto* view : {loopNest_, stepText_, llvm_, assembly_, gpu_}) {
    QPalette pal = palette();
    if (stale) pal.setColor(QPalette::Text, pal.color(QPalette::PlaceholderText));
    view->setPalette(pal);
  }
  tabs_->setToolTip(stale ? tr("The schedule has an error; this is the code of the last schedule that lowered.")
                          : QString());
}

bool LoweringPanel::wantsLlvmIR() const { return currentTab() == Tab::LlvmIR; }
bool LoweringPanel::wantsAssembly() const { return currentTab() == Tab::Assembly; }
std::optional<Target> LoweringPanel::wantsGpuCode() const {
  if (currentTab() != Tab::Gpu) return std::nullopt;
  auto target = Target::parse(gpuTarget_->currentData().toString().toStdString());
  if (!target) return std::nullopt;
  return *target;
}
LoweringPanel::Tab LoweringPanel::currentTab() const { return Tab(tabs_->currentIndex()); }
void LoweringPanel::setCurrentTab(Tab tab) { tabs_->setCurrentIndex(int(tab)); }

void LoweringPanel::highlightLoops(const QStringList& loops) {
  highlighted_ = loops;
  applyHighlights(loopNest_, linking_.loopNestRanges(loops), true);
  applyHighlights(llvm_, lowering_ && lowering_->llvmIR ? linking_.llvmRanges(llvm_->toPlainText(), loops)
                                                        : QList<LineRange>{},
                  true);
  applyHighlights(assembly_, lowering_ && lowering_->assembly
                                 ? linking_.assemblyRanges(assembly_->toPlainText(), loops)
                                 : QList<LineRange>{},
                  true);
}

QList<int> LoweringPanel::highlightedLoopHeaders() const {
  QList<int> lines;
  for (auto& range : linking_.loopNestRanges(highlighted_)) lines << range.first;
  return lines;
}

void LoweringPanel::applyHighlights(QPlainTextEdit* view, const QList<LineRange>& ranges, bool strongFirstLine) {
  bool dark = palette().color(QPalette::Base).lightness() < 128;
  QColor body = dark ? QColor(0xe0, 0xb0, 0x40, 34) : QColor(0xff, 0xd8, 0x60, 60);
  QColor header = dark ? QColor(0xe0, 0xb0, 0x40, 80) : QColor(0xff, 0xd8, 0x60, 150);
  QList<QTextEdit::ExtraSelection> selections;
  QTextDocument* document = view->document();
  for (const LineRange& range : ranges) {
    for (int line = range.first; line <= range.last; ++line) {
      QTextBlock block = document->findBlockByNumber(line);
      if (!block.isValid()) break;
      QTextEdit::ExtraSelection selection;
      selection.format.setBackground(strongFirstLine && line == range.first ? header : body);
      selection.format.setProperty(QTextFormat::FullWidthSelection, true);
      selection.cursor = QTextCursor(block);
      selections << selection;
    }
  }
  view->setExtraSelections(selections);
  // Bring the first linked code into view, as Compiler Explorer does, without moving the
  // cursor the user may be reading with.
  if (!ranges.isEmpty()) {
    // In a plain-text view without wrapping the scroll bar counts lines.
    QScrollBar* scroll = view->verticalScrollBar();
    int first = ranges.first().first;
    int visibleLines = std::max(1, view->viewport()->height() / std::max(1, view->fontMetrics().height()));
    if (first < scroll->value() || first >= scroll->value() + visibleLines) scroll->setValue(std::max(0, first - 3));
  }
}

void LoweringPanel::pointAtLoopNestLine(int line) {
  const PrintedLoop* loop = linking_.loopAtLine(line);
  QString name = loop ? loop->name : QString();
  if (name == pointed_) return;
  pointed_ = name;
  emit loopPointedAt(name);
}

void LoweringPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    for (CodeHighlighter* highlighter : highlighters_) highlighter->setPalette(palette());
    setStale(stale_);
  }
}

void LoweringPanel::pointAtLlvmLine(int line) {
  if (!lowering_ || !lowering_->llvmIR) return;
  QString name = linking_.loopOfLlvmLine(llvm_->toPlainText().split(QLatin1Char('\n')), line);
  if (name == pointed_) return;
  pointed_ = name;
  emit loopPointedAt(name);
}

void LoweringPanel::pointAtAssemblyLine(int line) {
  if (!lowering_ || !lowering_->assembly) return;
  QString name = linking_.loopOfAssemblyLine(assembly_->toPlainText().split(QLatin1Char('\n')), line);
  if (name == pointed_) return;
  pointed_ = name;
  emit loopPointedAt(name);
}

bool LoweringPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == assembly_->viewport() && event->type() == QEvent::MouseMove) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    pointAtAssemblyLine(assembly_->cursorForPosition(mouse->position().toPoint()).blockNumber());
  }
  if (watched == llvm_->viewport() && event->type() == QEvent::MouseMove) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    pointAtLlvmLine(llvm_->cursorForPosition(mouse->position().toPoint()).blockNumber());
  }
  if (watched == loopNest_->viewport()) {
    if (event->type() == QEvent::MouseMove) {
      auto* mouse = static_cast<QMouseEvent*>(event);
      pointAtLoopNestLine(loopNest_->cursorForPosition(mouse->position().toPoint()).blockNumber());
    } else if (event->type() == QEvent::Leave) {
      pointAtLoopNestLine(loopNest_->textCursor().blockNumber());
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace tessel::views
