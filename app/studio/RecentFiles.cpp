// RecentFiles: a short MRU list kept in QSettings ("recentFiles").
#include "app/studio/RecentFiles.h"

#include <QFileInfo>
#include <QSettings>

namespace tessel::studio {

namespace {
const char* const kKey = "recentFiles";
}

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {
  files_ = QSettings().value(kKey).toStringList();
  while (files_.size() > maximumCount()) files_.removeLast();
}

void RecentFiles::add(const QString& path) {
  QString absolute = QFileInfo(path).absoluteFilePath();
  files_.removeAll(absolute);
  files_.prepend(absolute);
  while (files_.size() > maximumCount()) files_.removeLast();
  save();
}

void RecentFiles::remove(const QString& path) {
  if (files_.removeAll(QFileInfo(path).absoluteFilePath()) > 0) save();
}

void RecentFiles::clear() {
  files_.clear();
  save();
}

void RecentFiles::save() {
  QSettings().setValue(kKey, files_);
  emit changed();
}

}  // namespace tessel::studio
