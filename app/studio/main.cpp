// tessel-studio: the desktop IDE for graphs and schedules.
#include <QApplication>
#include <QCommandLineParser>

#include "app/studio/MainWindow.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("Tessel Studio");
  QApplication::setOrganizationName("Tessel");
  QCommandLineParser parser;
  parser.setApplicationDescription("Tessel Studio: see, compare, edit and measure a model's graph and schedules.");
  parser.addHelpOption();
  parser.addPositionalArgument("file", "An ONNX model or a .tessel project to open.", "[FILE]");
  parser.process(app);

  tessel::studio::MainWindow window;
  window.show();
  if (!parser.positionalArguments().isEmpty()) window.openFile(parser.positionalArguments().first());
  return app.exec();
}
