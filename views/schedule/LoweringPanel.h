// What a schedule lowers to, in tabs: the loop nest, the IR after each lowering step, the LLVM IR,
// the assembly and the GPU code (CUDA or OpenCL C); with the loops linked to the schedule line
// pointed at.
#pragma once

#include <QWidget>

#include <memory>
#include <optional>

#include "compiler/driver/ScheduleTask.h"
#include "views/schedule/LoopLinking.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTabWidget;

namespace tessel::views {

class CodeHighlighter;

/// Read-only views of one lowering. The LLVM IR and assembly are expensive to emit, so the
/// panel asks for them (codeWanted) only while their tab is visible; a lowering without them
/// shows "emitted when this tab is open" there.
class LoweringPanel : public QWidget {
  Q_OBJECT

public:
  enum class Tab { LoopNest, Steps, LlvmIR, Assembly, Gpu };

  explicit LoweringPanel(QWidget* parent = nullptr);

  /// Shows `lowering` (null: empty), named after the function `functionName`, linked to the
  /// schedule it came from.
  void setLowering(std::shared_ptr<const driver::TaskLowering> lowering, const QString& functionName);
  std::shared_ptr<const driver::TaskLowering> lowering() const { return lowering_; }
  /// Greys the code out: the schedule text has an error, and this is the last good result.
  void setStale(bool stale);
  bool isStale() const { return stale_; }

  /// Highlights the code generated for the loops `loops` (schedule names) in every tab.
  void highlightLoops(const QStringList& loops);
  /// The 0-based "for" lines of the loop-nest loops highlighted now, in order.
  QList<int> highlightedLoopHeaders() const;

  /// Whether the visible tab needs the LLVM IR / assembly.
  bool wantsLlvmIR() const;
  bool wantsAssembly() const;
  /// The GPU target whose code the visible tab shows ("opencl", "cuda -arch=sm_90"), if it is
  /// the GPU tab.
  std::optional<Target> wantsGpuCode() const;

  Tab currentTab() const;
  void setCurrentTab(Tab tab);
  const LoopLinking& linking() const { return linking_; }
  QPlainTextEdit* loopNestView() const { return loopNest_; }
  QPlainTextEdit* llvmView() const { return llvm_; }
  QPlainTextEdit* assemblyView() const { return assembly_; }
  QPlainTextEdit* gpuView() const { return gpu_; }
  QComboBox* gpuTargetSelector() const { return gpuTarget_; }
  QComboBox* stepSelector() const { return stepSelector_; }
  /// Lines of the selected step's IR that the step changed (tinted; 0 for the first step).
  int changedStepLineCount() const { return changedStepLines_; }

signals:
  /// The user points at (hovers, or puts the cursor in) a loop of the loop nest, or at the
  /// LLVM IR or assembly of one: its schedule name, or empty when they point at none.
  void loopPointedAt(const QString& loop);
  /// A tab that needs LLVM IR, assembly or GPU code became visible and this lowering has none
  /// (or another GPU target was chosen).
  void codeWanted();

private:
  void showStep(int index);
  void pointAtLoopNestLine(int line);
  void pointAtLlvmLine(int line);
  void pointAtAssemblyLine(int line);
  void applyHighlights(QPlainTextEdit* view, const QList<LineRange>& ranges, bool strongFirstLine);
  bool eventFilter(QObject* watched, QEvent* event) override;
  void changeEvent(QEvent* event) override;

  QTabWidget* tabs_;
  QPlainTextEdit* loopNest_;
  QComboBox* stepSelector_;
  QLabel* stepTiming_;
  QPlainTextEdit* stepText_;
  QPlainTextEdit* llvm_;
  QPlainTextEdit* assembly_;
  QComboBox* gpuTarget_;
  QPlainTextEdit* gpu_;
  std::shared_ptr<const driver::TaskLowering> lowering_;
  LoopLinking linking_;
  QStringList highlighted_;
  QString pointed_;
  bool stale_ = false;
  int changedStepLines_ = 0;
  QList<CodeHighlighter*> highlighters_;
};

}  // namespace tessel::views
