// ratelab-cli export P.json --to nginx|envoy|haproxy [-o FILE]
// Writes the policy file as another rate limiter's configuration. Approximations are printed
// as warnings (and written as comments in the output); a policy the target cannot approximate
// is an error, nothing is written, and the exit code is 2.

#include <QCommandLineParser>
#include <QSaveFile>
#include <cstdio>

#include "cli/command.h"
#include "ratelab/policy_export.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

Diagnostic located(const ExportNote& note, const std::string& path,
                   const PolicySourceMap& sources) {
    SourceLocation at = sources.locate(note.pointer);
    return Diagnostic{note.kind == ExportNote::Kind::Refused ? Diagnostic::Severity::Error
                                                             : Diagnostic::Severity::Warning,
                      path,
                      at.line,
                      at.column,
                      note.pointer,
                      note.message};
}

int runExport(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Writes a policy file as nginx limit_req, Envoy local rate limit or HAProxy stick-table "
        "configuration. What the target cannot express is said in comments; a policy it cannot "
        "approximate is refused (exit 2).");
    parser.addPositionalArgument("policy", "The policy file (JSON).", "P.json");
    QCommandLineOption to("to", "The target: nginx, envoy or haproxy.", "TARGET");
    QCommandLineOption output({"o", "output"}, "Write to FILE instead of standard output.", "FILE");
    QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOptions({to, output, help});
    if (!parser.parse(QStringList{"ratelab-cli export"} + arguments)) {
        std::fprintf(stderr, "ratelab-cli export: %s\n", qPrintable(parser.errorText()));
        return kBadInput;
    }
    if (parser.isSet(help)) {
        // helpText() names the program as invoked; name the subcommand instead.
        QString text = parser.helpText();
        text.replace(0, text.indexOf('\n'),
                     QStringLiteral("Usage: ratelab-cli export [options] P.json"));
        std::printf("%s", qPrintable(text));
        return kSuccess;
    }
    if (parser.positionalArguments().size() != 1) {
        std::fprintf(stderr, "ratelab-cli export: expected one policy file\n");
        return kBadInput;
    }
    if (!parser.isSet(to)) {
        std::fprintf(stderr, "ratelab-cli export: --to nginx|envoy|haproxy is required\n");
        return kBadInput;
    }
    std::optional<ExportTarget> target = parseExportTarget(parser.value(to).toStdString());
    if (!target) {
        std::fprintf(stderr,
                     "ratelab-cli export: unknown target \"%s\"; use nginx, envoy or "
                     "haproxy\n",
                     qPrintable(parser.value(to)));
        return kBadInput;
    }
    const std::string path = parser.positionalArguments().front().toStdString();
    PolicyLoadResult loaded = loadPolicyFile(path);
    for (const Diagnostic& d : loaded.diagnostics) {
        std::fprintf(stderr, "%s\n", formatDiagnostic(d).c_str());
    }
    if (!loaded.ok()) {
        std::fprintf(stderr, "ratelab-cli export: %s is invalid; nothing exported\n", path.c_str());
        return kBadInput;
    }
    ExportResult result = exportPolicySet(*loaded.policies, *target);
    for (const ExportNote& note : result.notes) {
        std::fprintf(stderr, "%s\n", formatDiagnostic(located(note, path, loaded.sources)).c_str());
    }
    if (!result.ok()) {
        std::fprintf(stderr,
                     "ratelab-cli export: %s cannot express this policy file; nothing "
                     "exported\n",
                     std::string(exportTargetName(*target)).c_str());
        return kBadInput;
    }
    if (!parser.isSet(output)) {
        std::fwrite(result.text.data(), 1, result.text.size(), stdout);
        return kSuccess;
    }
    QSaveFile file(parser.value(output));
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(result.text.data(), static_cast<qint64>(result.text.size())) !=
            static_cast<qint64>(result.text.size()) ||
        !file.commit()) {
        std::fprintf(stderr, "ratelab-cli export: cannot write %s: %s\n",
                     qPrintable(parser.value(output)), qPrintable(file.errorString()));
        return kBadInput;
    }
    return kSuccess;
}

}  // namespace

RATELAB_CLI_COMMAND({"export", "export P.json --to nginx|envoy|haproxy [-o FILE]",
                     "write a policy file as nginx, Envoy or HAProxy configuration", &runExport});

}  // namespace ratelab::cli
