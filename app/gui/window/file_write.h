#pragma once

// Writing a whole file all or nothing (QSaveFile): a failed write leaves what was there before.
// Any thread.

#include <QByteArrayView>
#include <QString>

namespace ratelab::gui {

/// Writes `bytes` to `path`, replacing it only once everything is written. On failure returns
/// false with `error` saying why ("PATH: reason").
bool writeWholeFile(const QString& path, QByteArrayView bytes, QString& error);

}  // namespace ratelab::gui
