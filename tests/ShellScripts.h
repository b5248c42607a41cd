// Stand-in programs for tests: a /bin/sh script written where a test points a tool (the
// `tessel` a measurement runs, the C compiler an export links with), to make it crash, hang,
// fail or answer on purpose.
#pragma once

#include <QFile>
#include <QString>
#include <QtGlobal>

namespace tessel::testing {

/// Writes an executable shell script `name` in `directory` running `body`; returns its path.
inline QString writeShellScript(const QString& directory, const QString& name, const QString& body) {
  QString path = directory + "/" + name;
  QFile script(path);
  if (!script.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
  script.write(("#!/bin/sh\n" + body + "\n").toUtf8());
  script.close();
  script.setPermissions(script.permissions() | QFileDevice::ExeOwner);
  return path;
}

}  // namespace tessel::testing
