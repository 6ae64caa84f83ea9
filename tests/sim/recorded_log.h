#pragma once

// A log text of a test read into memory the way a replay reads its files.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <memory>
#include <string>

#include "sim/access_log.h"

namespace ratelab::simtest {

/// `text` written to `name` in the test's temporary folder and read in `format`. Null (with a
/// warning) when it does not read.
inline std::shared_ptr<const sim::RecordedTraffic> recordedLog(const std::string& text,
                                                               sim::LogFormat format,
                                                               const QString& name) {
    static QTemporaryDir dir;  // lives as long as the test process
    const QString path = QDir(dir.path()).filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return nullptr;
    file.write(text.data(), static_cast<qint64>(text.size()));
    file.close();
    sim::ReplayInput input;
    input.files = {path.toStdString()};
    input.format = sim::LogFormatOptions{format, {}, {}};
    sim::LogReading reading;
    std::shared_ptr<const sim::RecordedTraffic> traffic = sim::loadAccessLog(input, reading);
    if (!traffic && reading.error) qWarning("%s", reading.error->message.c_str());
    return traffic;
}

}  // namespace ratelab::simtest
