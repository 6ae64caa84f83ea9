#pragma once

// Where the workbench finds the files it ships with: scenarios/ and resources/ of an installed
// tree, of the source tree next to the build, or the copies embedded in the executable.

#include <QString>
#include <QStringList>

namespace ratelab::gui {

/// The folders holding `scenarios/` and `resources/`, best first: $RATELAB_DATA_DIR, then
/// <exe>/../share/ratelab (installed), then the source tree around the build folder, then the
/// embedded copy ":/ratelab". Only folders that exist are listed.
QStringList dataRoots();

/// `relative` (e.g. "scenarios/header-rotation.json") in the first data root that has it;
/// empty when none does.
QString findDataFile(const QString& relative);

/// Every scenario file (*.json) of the first data root that has a scenarios/ folder.
QStringList scenarioFiles();

inline constexpr const char* kDefaultScenario = "scenarios/header-rotation.json";
inline constexpr const char* kDefaultPolicy = "resources/policies/default.json";

/// A path into the embedded copies (":/..."): read-only, and no file on disk can name it.
inline bool isEmbedded(const QString& path) {
    return path.startsWith(":/");
}

/// Reads a whole file, from disk or from the embedded resources (":/..."). Refuses files larger
/// than `maxBytes`; on failure returns false with `error` saying why.
bool readWholeFile(const QString& path, qint64 maxBytes, QByteArray& out, QString& error);

}  // namespace ratelab::gui
