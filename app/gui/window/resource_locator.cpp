#include "gui/window/resource_locator.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace ratelab::gui {

QStringList dataRoots() {
    QStringList candidates;
    const QString env = qEnvironmentVariable("RATELAB_DATA_DIR");
    if (!env.isEmpty()) candidates << env;
    const QString exe = QCoreApplication::applicationDirPath();
    candidates << exe + "/../share/ratelab";
    // build/app/gui/ratelab, build/tests/gui/tst_x: the source tree is a few levels up.
    candidates << exe + "/../../.." << exe + "/../..";
#ifdef RATELAB_SOURCE_DIR
    candidates << QStringLiteral(RATELAB_SOURCE_DIR);
#endif
    candidates << QStringLiteral(":/ratelab");

    QStringList roots;
    for (const QString& c : candidates) {
        const QString clean = QDir::cleanPath(c);
        if (roots.contains(clean)) continue;
        if (QFileInfo(clean + "/scenarios").isDir() || QFileInfo(clean + "/resources").isDir()) {
            roots << clean;
        }
    }
    return roots;
}

QString findDataFile(const QString& relative) {
    for (const QString& root : dataRoots()) {
        const QString path = root + "/" + relative;
        if (QFileInfo::exists(path)) return path;
    }
    return {};
}

QStringList scenarioFiles() {
    for (const QString& root : dataRoots()) {
        QDir dir(root + "/scenarios");
        if (!dir.exists()) continue;
        QStringList files;
        for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
            files << dir.filePath(name);
        if (!files.isEmpty()) return files;
    }
    return {};
}

bool readWholeFile(const QString& path, qint64 maxBytes, QByteArray& out, QString& error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        error = QObject::tr("%1: cannot open: %2").arg(path, file.errorString());
        return false;
    }
    if (file.size() > maxBytes) {
        error = QObject::tr("%1: the file is %2 bytes; files up to %3 bytes are read")
                    .arg(path)
                    .arg(file.size())
                    .arg(maxBytes);
        return false;
    }
    out = file.readAll();
    if (file.error() != QFileDevice::NoError) {
        error = QObject::tr("%1: cannot read: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace ratelab::gui
