// ModelSession: import + compile on a worker, results handed to the GUI thread as values.
#include "views/session/ModelSession.h"

namespace tessel::views {

namespace {
const QString kCompileChannel = QStringLiteral("compile");
}

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
      kCompileChannel, tr("Compiling %1").arg(shared->path),
      [shared](JobContext& job) {
        const Request& request = *shared;
        Result result;
        result.imported = request.imported;
        try {
          if (!result.imported) {
            job.reportProgress(5, QObject::tr("Importing"));
            auto graph = driver::loadModel(request.path.toStdString(), request.load);
            if (!graph) {
              result.error = QString::fromStdString(graph.error().toString());
              return result;
            }
            result.imported = std::make_shared<const graph::Graph>(std::move(*graph));
          }
          if (job.cancelled()) return result;
          job.reportProgress(30, QObject::tr("Optimizing and lowering"));
          auto model = driver::compileGraph(*result.imported, request.compile);
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
      [this, shared](Result result) {
        if (!result.error.isEmpty()) {
          emit failed(result.error, shared->path);
          return;
        }
        modelPath_ = shared->path;
        load_ = shared->load;
        compile_ = shared->compile;
        imported_ = result.imported;
        compiled_ = result.compiled;
        emit compiled();
      });
}

}  // namespace tessel::views
