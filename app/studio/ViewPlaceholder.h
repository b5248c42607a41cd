// A clearly labelled stand-in for a central view or dock whose real widget has not landed
// yet: it names the view, the component that will fill it, and what the open model holds.
#pragma once

#include <QWidget>

class QLabel;

namespace tessel::studio {

class ViewPlaceholder : public QWidget {
  Q_OBJECT

public:
  /// `title` ("Graph"), `component` ("views/graph: GraphWorkbench").
  ViewPlaceholder(const QString& title, const QString& component, QWidget* parent = nullptr);
  /// A line about the open model ("tiny_resnet.onnx: 21 operations, 6 kernels").
  void setDetail(const QString& detail);

private:
  QLabel* detail_ = nullptr;
};

}  // namespace tessel::studio
