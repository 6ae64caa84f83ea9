#pragma once

// Judges files with a shipped JSON Schema (resources/schema/) through an independent checker,
// python3-jsonschema (tests/data/schema_check.py), so that a suite can hold the schema and the
// loader to the same verdict file by file.

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>
#include <initializer_list>
#include <map>

namespace ratelab::testing {

/// What the checker says of one file: "syntax" (not JSON ratelab reads), "invalid" or "valid".
enum class SchemaVerdict { Syntax, Invalid, Valid };

inline const char* schemaVerdictName(SchemaVerdict v) {
    constexpr const char* kNames[] = {"syntax", "invalid", "valid"};
    return kNames[static_cast<int>(v)];
}

inline QString sourcePath(const QString& relative) {
    return QStringLiteral(RATELAB_SOURCE_DIR "/") + relative;
}

/// The checker's verdicts on `files` (relative to the source root) under `schema` (likewise),
/// keyed by the relative path: {"verdict": ..., "errors": [...]}. Empty, with `error` set, when
/// the checker itself failed.
inline std::map<QString, QJsonObject> judgeWithSchema(const QString& schema,
                                                      const QStringList& files, QString& error) {
    QStringList arguments{sourcePath("tests/data/schema_check.py"), sourcePath(schema)};
    for (const QString& f : files)
        arguments << sourcePath(f);
    QProcess python;
    python.start("/usr/bin/python3", arguments);  // the system one, which has python3-jsonschema
    if (!python.waitForFinished(120'000) || python.exitStatus() != QProcess::NormalExit ||
        python.exitCode() != 0) {
        error = "schema_check.py failed: " + QString::fromUtf8(python.readAllStandardError());
        return {};
    }
    std::map<QString, QJsonObject> verdicts;
    const QString root = sourcePath("");
    for (const QByteArray& line : python.readAllStandardOutput().split('\n')) {
        if (line.isEmpty()) continue;
        QJsonObject o = QJsonDocument::fromJson(line).object();
        verdicts[o["file"].toString().mid(root.size())] = o;
    }
    return verdicts;
}

/// The checker's verdict and, when it is not `expected`, its first errors, for a failure message.
inline QString describeJudgement(const QJsonObject& judged) {
    return judged["verdict"].toString() + " " +
           QString::fromUtf8(
               QJsonDocument(judged["errors"].toArray()).toJson(QJsonDocument::Compact));
}

/// The *.json files directly in `dirs` (relative to the source root), sorted, as relative paths:
/// what a table of files must cover.
inline QStringList jsonFilesIn(std::initializer_list<const char*> dirs) {
    QStringList files;
    for (const char* dir : dirs) {
        for (const QString& f : QDir(sourcePath(dir)).entryList({"*.json"}, QDir::Files))
            files << QString(dir) + f;
    }
    files.sort();
    return files;
}

}  // namespace ratelab::testing
