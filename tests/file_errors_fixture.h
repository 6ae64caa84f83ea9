#pragma once

// The rule every file loader follows for a file it cannot read (engine/src/io/text_file.cpp),
// checked the same way for each loader: the result is flagged unreadable, and its one
// diagnostic says why in the system's words, or that the path is a directory.

#include <QtTest>

#include <string>

#include "ratelab/diagnostic.h"

namespace ratelab::testing {

/// `load(path)` returns a loader's result (unreadable, diagnostics); `directory` is a directory
/// of the source tree. Fails the calling test, which should return when QTest says so.
template <class Load>
void checkUnreadableFilesSayWhy(Load load, const std::string& missing,
                                const std::string& directory) {
    const auto absent = load(missing);
    QVERIFY(absent.unreadable);
    QCOMPARE(absent.diagnostics.size(), std::size_t(1));
    QCOMPARE(formatDiagnostic(absent.diagnostics[0]),
             missing + ": error: cannot open the file: No such file or directory");
    const auto folder = load(directory);
    QVERIFY(folder.unreadable);
    QCOMPARE(formatDiagnostic(folder.diagnostics.at(0)), directory + ": error: is a directory");
}

}  // namespace ratelab::testing
