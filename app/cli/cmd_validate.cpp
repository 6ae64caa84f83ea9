// ratelab-cli validate P.json [--previous OLD.json] [--json]
// Prints every diagnostic of a policy file, warnings included. Exit 0 when the file is valid
// (warnings allowed), 2 when it is not or the arguments are wrong.

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>

#include "cli/command.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

const char* levelName(CheckLevel level) {
    switch (level) {
        case CheckLevel::Syntax:
            return "syntax";
        case CheckLevel::Schema:
            return "schema";
        case CheckLevel::Semantics:
            return "semantics";
        case CheckLevel::Lint:
            return "lint";
    }
    return "schema";
}

QJsonObject toJson(const Diagnostic& d, CheckLevel level) {
    QJsonObject o;
    o["severity"] = d.severity == Diagnostic::Severity::Error ? "error" : "warning";
    o["level"] = levelName(level);
    o["file"] = QString::fromStdString(d.file);
    o["line"] = d.line;
    o["column"] = d.column;
    o["pointer"] = QString::fromStdString(d.pointer);
    o["message"] = QString::fromStdString(d.message);
    return o;
}

void printText(const PolicyLoadResult& result, const std::string& path) {
    std::size_t errors = 0;
    std::size_t warnings = 0;
    for (const Diagnostic& d : result.diagnostics) {
        std::printf("%s\n", formatDiagnostic(d).c_str());
        (d.severity == Diagnostic::Severity::Error ? errors : warnings) += 1;
    }
    std::printf("%s: %s (%zu error%s, %zu warning%s)\n", path.c_str(),
                result.ok() ? "valid" : "invalid", errors, errors == 1 ? "" : "s", warnings,
                warnings == 1 ? "" : "s");
}

int runValidate(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Checks a policy file: syntax, schema, semantics and lint warnings, each reported as "
        "FILE:LINE:COLUMN. Exit 0 when valid (warnings allowed), 2 when not.");
    parser.addPositionalArgument("policy", "The policy file (JSON).", "P.json");
    QCommandLineOption previous(
        "previous",
        "The version deployed before, to warn about windows or algorithms changed "
        "under the same policy name.",
        "OLD.json");
    QCommandLineOption json("json", "Print the diagnostics as JSON.");
    QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOptions({previous, json, help});
    if (!parser.parse(QStringList{"ratelab-cli validate"} + arguments)) {
        std::fprintf(stderr, "ratelab-cli validate: %s\n", qPrintable(parser.errorText()));
        return kBadInput;
    }
    if (parser.isSet(help)) {
        // helpText() names the program as invoked; name the subcommand instead.
        QString text = parser.helpText();
        text.replace(0, text.indexOf('\n'),
                     QStringLiteral("Usage: ratelab-cli validate [options] P.json"));
        std::printf("%s", qPrintable(text));
        return kSuccess;
    }
    if (parser.positionalArguments().size() != 1) {
        std::fprintf(stderr, "ratelab-cli validate: expected one policy file; see --help\n");
        return kBadInput;
    }
    const std::string path = parser.positionalArguments().front().toStdString();

    std::optional<PolicyLoadResult> old;
    PolicyCheckOptions options;
    if (parser.isSet(previous)) {
        old = loadPolicyFile(parser.value(previous).toStdString());
        if (!old->ok()) {
            for (const Diagnostic& d : old->diagnostics) {
                std::fprintf(stderr, "%s\n", formatDiagnostic(d).c_str());
            }
            std::fprintf(stderr,
                         "ratelab-cli validate: the previous version %s is invalid and "
                         "cannot be compared\n",
                         qPrintable(parser.value(previous)));
            return kBadInput;
        }
        options.previous = &*old->policies;
    }

    PolicyLoadResult result = loadPolicyFile(path, options);
    if (parser.isSet(json)) {
        QJsonArray list;
        for (std::size_t i = 0; i < result.diagnostics.size(); ++i) {
            list.append(toJson(result.diagnostics[i], result.levels[i]));
        }
        QJsonObject out;
        out["file"] = QString::fromStdString(path);
        out["valid"] = result.ok();
        out["diagnostics"] = list;
        std::printf("%s", QJsonDocument(out).toJson(QJsonDocument::Indented).constData());
    } else {
        printText(result, path);
    }
    return result.ok() ? kSuccess : kBadInput;
}

}  // namespace

RATELAB_CLI_COMMAND({"validate", "validate P.json [--previous OLD.json] [--json]",
                     "check a policy file and print every problem", &runValidate});

}  // namespace ratelab::cli
