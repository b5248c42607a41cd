// The model open in the Studio: its file, load and compile options, and the compiled result
// (graph after every pass, kernels, plan). Import and compile run as background jobs.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

#include "compiler/driver/Driver.h"
#include "views/common/JobRunner.h"

namespace tessel::views {

/// One model and what the compiler made of it. Views observe it; nothing here draws. Every
/// result is an immutable value behind a shared pointer, so views keep what they show alive
/// while a newer compile replaces it.
class ModelSession : public QObject {
  Q_OBJECT

public:
  explicit ModelSession(QObject* parent = nullptr);

  /// Imports and compiles `path` in the background (cancelling any compile in flight).
  /// compiled(), openedForViewing() or failed() follows. Until compiled() or
  /// openedForViewing(), everything below still describes the previous model, and after
  /// failed() it still does: a file that does not open never takes the open model away. The job (channel "compile", titled "Compiling <file name>")
  /// reports the compiler's steps as progress. `compile`'s own progress and cancelled
  /// callbacks, if set, are called too (on the worker), for this compile only: compileOptions()
  /// keeps none.
  void open(const QString& path, const driver::LoadOptions& load = {}, const driver::CompileOptions& compile = {});
  /// Compiles the open model again with other options (pass options from the timeline).
  void recompile(const driver::CompileOptions& compile);
  /// Stops the compile in flight: the worker returns within one pass or one kernel, and the
  /// previous result stays.
  void cancel();
  bool isBusy() const;

  /// The model of compiledModel() and the options it was compiled with.
  QString modelPath() const { return modelPath_; }
  const driver::LoadOptions& loadOptions() const { return load_; }
  const driver::CompileOptions& compileOptions() const { return compile_; }
  /// The imported graph (types inferred), before any optimization pass; null until loaded.
  /// For a model open for viewing only, its structure: placeholders stand for the nodes Tessel
  /// cannot compile, and types are only those the model declares.
  std::shared_ptr<const graph::Graph> imported() const { return imported_; }
  /// The last successful compile; null until one finished, and for a model open for viewing.
  std::shared_ptr<const driver::CompiledModel> compiledModel() const { return compiled_; }
  /// Whether the open model uses operators Tessel does not implement: it was imported to be
  /// viewed (imported() holds a placeholder for each such node) and nothing was compiled.
  bool isViewOnly() const { return imported_ && !compiled_; }

  JobRunner& jobs() { return jobs_; }

signals:
  void compileStarted(const QString& path);
  /// A new compiledModel() is available.
  void compiled();
  /// The model of open() uses operators Tessel does not implement, so it cannot be compiled;
  /// it became the open model all the same, for viewing (isViewOnly()), with imported() showing
  /// its whole structure. `message` is the compiler's diagnostic naming every such node.
  void openedForViewing(const QString& message);
  /// Import or compile of `path` failed; `message` is the compiler's diagnostic (file, node,
  /// hint). The previous model stays.
  void failed(const QString& message, const QString& path);

private:
  struct Request;
  struct Result;
  void startCompile(Request request);

  JobRunner jobs_;
  QString modelPath_;
  driver::LoadOptions load_;
  driver::CompileOptions compile_;
  std::shared_ptr<const graph::Graph> imported_;
  std::shared_ptr<const driver::CompiledModel> compiled_;
};

}  // namespace tessel::views
