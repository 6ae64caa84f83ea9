// ratelab-cli validate [--previous OLD.json] [--json] P.json...
// Prints every diagnostic of each policy file, warnings included. Exit 0 when every file is valid
// (warnings allowed), 2 when one is not, 74 when one cannot be read. A .yaml or .yml file, or a
// directory, is Envoy's rate limit service configuration (formats/envoy/rls_config.h) instead.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>

#include "cli/command.h"
#include "cli/inputs.h"
#include "formats/envoy/rls_config.h"
#include "formats/import/policy_source.h"
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
                result.ok()         ? "valid"
                : result.unreadable ? "unreadable"
                                    : "invalid",
                errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
}

// The exit code for several files: an unreadable file outweighs an invalid one.
ExitCode worse(ExitCode a, ExitCode b) {
    auto rank = [](ExitCode c) { return c == kIoError ? 2 : c == kSuccess ? 0 : 1; };
    return rank(a) >= rank(b) ? a : b;
}

QJsonObject fileJson(const PolicyLoadResult& result, const std::string& name) {
    QJsonArray list;
    for (std::size_t i = 0; i < result.diagnostics.size(); ++i) {
        list.append(toJson(result.diagnostics[i], result.levels[i]));
    }
    QJsonObject out;
    out["file"] = QString::fromStdString(name);
    out["valid"] = result.ok();
    out["diagnostics"] = list;
    return out;
}

// One Envoy rate limit service configuration (a YAML file or a directory of them): its
// diagnostics and a summary line, or its JSON object.
ExitCode validateRlsConfig(const std::string& path, bool json, QJsonArray& files) {
    const formats::envoy::RlsLoadResult result = formats::envoy::loadRlsConfig(path);
    const ExitCode code = result.ok() ? kSuccess : result.unreadable ? kIoError : kInvalidInput;
    if (json) {
        QJsonArray list;
        for (const Diagnostic& d : result.diagnostics)
            list.append(toJson(d, CheckLevel::Schema));
        QJsonObject out;
        out["file"] = QString::fromStdString(path);
        out["valid"] = result.ok();
        out["diagnostics"] = list;
        files.append(out);
        return code;
    }
    std::size_t errors = 0;
    std::size_t warnings = 0;
    for (const Diagnostic& d : result.diagnostics) {
        std::printf("%s\n", formatDiagnostic(d).c_str());
        (d.severity == Diagnostic::Severity::Error ? errors : warnings) += 1;
    }
    std::string domains;
    if (result.ok()) {
        const std::size_t n = result.config->domains.size();
        domains = ", " + std::to_string(n) + " domain" + (n == 1 ? "" : "s");
    }
    std::printf("%s: %s (Envoy rate limit service configuration%s; %zu error%s, %zu warning%s)\n",
                path.c_str(),
                result.ok()         ? "valid"
                : result.unreadable ? "unreadable"
                                    : "invalid",
                domains.c_str(), errors, errors == 1 ? "" : "s", warnings,
                warnings == 1 ? "" : "s");
    return code;
}

int runValidate(const Arguments& args) {
    std::optional<PolicyLoadResult> old;
    PolicyCheckOptions options;
    if (args.isSet("previous")) {
        old = readPolicyArgument(args.value("previous"));
        if (!old->ok()) {
            printDiagnostics(old->diagnostics);
            fail(exitCodeOf(*old), "the previous version " + args.value("previous") + " is " +
                                       (old->unreadable ? "unreadable" : "invalid") +
                                       " and cannot be compared");
            return exitCodeOf(*old);
        }
        options.previous = &*old->policies;
    }

    ExitCode exit = kSuccess;
    QJsonArray files;
    for (const std::string& path : args.positionals()) {
        // KIND:PATH is an import (a Traefik or Envoy YAML file), never the service's YAML.
        if (path != "-" && !formats::splitImportArgument(path) &&
            formats::envoy::isRlsConfigPath(path)) {
            exit = worse(exit, validateRlsConfig(path, args.isSet("json"), files));
            continue;
        }
        const PolicyLoadResult result = readPolicyArgument(path, options);
        const std::string name = path == "-" ? kStdinName : path;
        exit = worse(exit, exitCodeOf(result));
        if (args.isSet("json")) {
            files.append(fileJson(result, name));
        } else {
            printText(result, name);
        }
    }
    if (args.isSet("json")) {
        const QJsonDocument document =
            files.size() == 1 ? QJsonDocument(files.first().toObject()) : QJsonDocument(files);
        std::printf("%s", document.toJson(QJsonDocument::Indented).constData());
    }
    return exit;
}

Command validateCommand() {
    Command c;
    c.name = "validate";
    c.summary = "check policy files and print every problem";
    c.description =
        "Checks each policy file: syntax, schema, semantics and lint warnings, each reported as "
        "FILE:LINE:COLUMN, then one summary line per file. Several files are checked one by one, "
        "as a pre-commit hook needs; the exit status is the worst of them. Files may be pipes "
        "or process substitutions: validate /dev/stdin, --previous <(git show HEAD:p.json). "
        "A .yaml or .yml file, or a directory of them, is checked as Envoy's rate limit service "
        "configuration (envoyproxy/ratelimit's format, as serve --rls-config reads it).";
    c.positionals = {{"P.json", "The policy files (or RLS .yaml files, or directories) to check.",
                      Option::Kind::Input, true}};
    c.options = {
        Option::input("previous", "OLD.json",
                      "The version deployed before, to warn about windows or algorithms changed "
                      "under the same policy name."),
        Option::flag("json",
                     "Print the diagnostics as JSON: one object per file ({file, valid, "
                     "diagnostics}), an array of them for several files."),
    };
    c.run = &runValidate;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(validateCommand());

}  // namespace ratelab::cli
