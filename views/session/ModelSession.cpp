// ModelSession: import + compile on a worker, results handed to the GUI thread as values.
#include "views/session/ModelSession.h"

namespace tessel::views {

namespace {
const QString kCompileChannel = QStringLiteral("compile");
}

struct ModelSession::Result {
  std::shared_ptr<const graph::Graph> imported;
  std::shared_ptr<const driver::CompiledModel> compiled;
  QString error;
};

ModelSession::ModelSession(QObject* parent) : QObject(parent) {}

void ModelSession::open(const QString& path, const driver::LoadOptions& load, const driver::CompileOptions& compile) {
  modelPath_ = path;
  load_ = load;
  compile_ = compile;
  imported_.reset();
  compiled_.reset();
  startCompile(true);
}

void ModelSession::recompile(const driver::CompileOptions& compile) {
  compile_ = compile;
  startCompile(!imported_);
}

void ModelSession::cancel() { jobs_.cancel(kCompileChannel); }

bool ModelSession::isBusy() const { return jobs_.isRunning(kCompileChannel); }

void ModelSession::startCompile(bool reimport) {
  std::string path = modelPath_.toStdString();
  auto imported = reimport ? nullptr : imported_;
  driver::LoadOptions load = load_;
  driver::CompileOptions compile = compile_;
  emit compileStarted(modelPath_);
  jobs_.start<Result>(
      kCompileChannel, tr("Compiling %1").arg(modelPath_),
      [path, imported, load, compile](JobContext& job) {
        Result result;
        result.imported = imported;
        try {
          if (!result.imported) {
            job.reportProgress(5, QObject::tr("Importing"));
            auto graph = driver::loadModel(path, load);
            if (!graph) {
              result.error = QString::fromStdString(graph.error().toString());
              return result;
            }
            result.imported = std::make_shared<const graph::Graph>(std::move(*graph));
          }
          if (job.cancelled()) return result;
          job.reportProgress(30, QObject::tr("Optimizing and lowering"));
          auto model = driver::compileGraph(*result.imported, compile);
          if (!model)
            result.error = QString::fromStdString(model.error().toString());
          else
            result.compiled = std::make_shared<const driver::CompiledModel>(std::move(*model));
        } catch (const std::exception& error) {
          // An internal compiler error must not take the Studio down with it.
          result.error = QObject::tr("internal compiler error (please report): %1").arg(error.what());
        }
        job.reportProgress(100);
        return result;
      },
      [this](Result result) {
        if (result.imported) imported_ = result.imported;
        if (!result.error.isEmpty()) {
          emit failed(result.error);
          return;
        }
        compiled_ = result.compiled;
        emit compiled();
      });
}

}  // namespace tessel::views
