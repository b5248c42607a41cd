// The most recently opened models and projects, remembered in QSettings across sessions.
#pragma once

#include <QObject>
#include <QStringList>

namespace tessel::studio {

/// Newest first, without duplicates, at most maximumCount() entries. Paths are stored
/// absolute, so the list works whatever directory the Studio starts in.
class RecentFiles : public QObject {
  Q_OBJECT

public:
  explicit RecentFiles(QObject* parent = nullptr);

  QStringList files() const { return files_; }
  /// Moves `path` to the front (adding it if new) and saves the list.
  void add(const QString& path);
  /// Drops `path` (a file that no longer opens) and saves the list.
  void remove(const QString& path);
  void clear();
  static int maximumCount() { return 10; }

signals:
  void changed();

private:
  void save();

  QStringList files_;
};

}  // namespace tessel::studio
