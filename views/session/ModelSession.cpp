// ModelSession: import + compile on a worker, results handed to the GUI thread as values.
#include "views/session/ModelSession.h"

#include <QFileInfo>

#include "compiler/frontend/onnx/OnnxImporter.h"
#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

namespace {
const QString kCompileChannel = QStringLiteral("compile");
/// The share of the progress bar an import takes when the job starts with one.
constexpr int kImportShare = 10;

/// Options as the session remembers them: without the callbacks of one open or compile.
template <class Options>
Options withoutCallbacks(Options options) {
  options.cancelled = nullptr;
  options.progress = nullptr;
  return options;
}

/// The structure of a model that did not load, when operators Tessel does not implement are
/// why: every node, those as placeholders. Null when the model fails for another reason too.
std::shared_ptr<const graph::Graph> importForViewing(const QString& path, const driver::LoadOptions& load) {
  frontend::OnnxImportOptions options;
  options.inputShapes = load.inputShapes;
  // Known values fix their inputs' shapes, as they do for the load.
  for (const auto& [name, value] : load.inputValues) options.inputShapes.emplace(name, value.shape());
  options.cancelled = load.cancelled;
  options.unsupportedAsPlaceholders = true;
  auto graph = frontend::importOnnxFile(path.toStdString(), options);
  if (!graph || graph::unsupportedOperations(*graph).empty()) return nullptr;
  return std::make_shared<const graph::Graph>(std::move(*graph));
}
}  // namespace

// What one compile was asked to do; it becomes the session's state only if it succeeds.
struct ModelSession::Request {
  QString path;
  driver::LoadOptions load;
  driver::CompileOptions compile;
  std::shared_ptr<const graph::Graph> imported;  ///< Null: import `path` first.
};

struct ModelSession::Result {
  std::shared_ptr<const graph::Graph> imported;
  std::shared_ptr<const driver::CompiledModel> compiled;
  QString error;
  /// The model cannot be compiled but can be viewed: `imported` is its structure and `error`
  /// names the nodes Tessel cannot compile.
  bool viewOnly = false;
};

ModelSession::ModelSession(QObject* parent) : QObject(parent) {}

void ModelSession::open(const QString& path, const driver::LoadOptions& load, const driver::CompileOptions& compile) {
  startCompile({path, load, compile, nullptr});
}

void ModelSession::recompile(const driver::CompileOptions& compile) {
  if (modelPath_.isEmpty()) return;
  startCompile({modelPath_, load_, compile, imported_});
}

void ModelSession::cancel() { jobs_.cancel(kCompileChannel); }

bool ModelSession::isBusy() const { return jobs_.isRunning(kCompileChannel); }

void ModelSession::startCompile(Request request) {
  emit compileStarted(request.path);
  auto shared = std::make_shared<const Request>(std::move(request));
  jobs_.start<Result>(
      kCompileChannel, tr("Compiling %1").arg(QFileInfo(shared->path).fileName()),
      [shared](JobContext& job) {
        const Request& request = *shared;
        Result result;
        result.imported = request.imported;
        int compileStart = result.imported ? 0 : kImportShare;
        try {
          if (!result.imported) {
            job.reportProgress(0, QObject::tr("Importing"));
            // The importer asks between nodes too: a cancel stops a large import early.
            driver::LoadOptions load = request.load;
            load.cancelled = [&job, theirs = request.load.cancelled] { return job.cancelled() || (theirs && theirs()); };
            load.progress = [&job, theirs = request.load.progress](int percent, const std::string& what) {
              if (theirs) theirs(percent, what);
              job.reportProgress(percent * kImportShare / 100, QString::fromStdString(what));
            };
            auto graph = driver::loadModel(request.path.toStdString(), load);
            if (!graph) {
              if (driver::isCancellation(graph.error())) return result;
              // A model Tessel cannot compile still shows, as Netron would show it.
              result.imported = importForViewing(request.path, load);
              result.viewOnly = result.imported != nullptr;
              // Cancelled while importing it for viewing: as quiet as any cancel.
              if (!result.viewOnly && load.cancelled()) return result;
              result.error = QString::fromStdString(graph.error().toString());
              return result;
            }
            result.imported = std::make_shared<const graph::Graph>(std::move(*graph));
          }
          // The compiler asks between passes and kernels, so a cancel stops the worker within
          // one of them; the caller's own callbacks, if any, still hear everything.
          driver::CompileOptions compile = request.compile;
          compile.cancelled = [&job, theirs = request.compile.cancelled] {
            return job.cancelled() || (theirs && theirs());
          };
          compile.progress = [&job, compileStart, theirs = request.compile.progress](int percent,
                                                                                     const std::string& what) {
            if (theirs) theirs(percent, what);
            job.reportProgress(compileStart + percent * (100 - compileStart) / 100, QString::fromStdString(what));
          };
          auto model = driver::compileGraph(*result.imported, compile);
          if (model)
            result.compiled = std::make_shared<const driver::CompiledModel>(std::move(*model));
          else if (!driver::isCancellation(model.error()))
            result.error = QString::fromStdString(model.error().toString());
        } catch (const std::exception& error) {
          // An internal compiler error must not take the Studio down with it.
          result.error = QObject::tr("internal compiler error (please report): %1").arg(error.what());
        }
        return result;
      },
      [this, shared](Result result) {
        if (result.viewOnly) {
          modelPath_ = shared->path;
          load_ = withoutCallbacks(shared->load);
          compile_ = withoutCallbacks(shared->compile);
          imported_ = result.imported;
          compiled_ = nullptr;
          emit openedForViewing(result.error);
          return;
        }
        if (!result.error.isEmpty()) {
          emit failed(result.error, shared->path);
          return;
        }
        if (!result.compiled) return;  // Cancelled by the caller's own callback.
        modelPath_ = shared->path;
        load_ = withoutCallbacks(shared->load);
        compile_ = withoutCallbacks(shared->compile);
        imported_ = result.imported;
        compiled_ = result.compiled;
        emit compiled();
      });
}

}  // namespace tessel::views
