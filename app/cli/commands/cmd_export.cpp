// ratelab-cli export --to nginx|envoy|haproxy [-o FILE] P.json
// Writes the policy file as another rate limiter's configuration. Approximations are printed
// as warnings (and written as comments in the output); a policy the target cannot approximate
// is an error, nothing is written, and the exit code is 2.

#include <cstdio>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "formats/policy_export.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

int runExport(const Arguments& args) {
    std::optional<formats::ExportTarget> target = formats::parseExportTarget(args.value("to"));
    if (!target) {
        return fail(kUsage,
                    "unknown target \"" + args.value("to") + "\"; use nginx, envoy or haproxy");
    }
    const std::string path = args.positionals().front();
    const std::string name = path == "-" ? kStdinName : path;
    PolicyLoadResult loaded = readPolicyArgument(path);
    printDiagnostics(loaded.diagnostics);
    if (!loaded.ok()) {
        fail(exitCodeOf(loaded),
             name + " is " + (loaded.unreadable ? "unreadable" : "invalid") + "; nothing exported");
        return exitCodeOf(loaded);
    }
    formats::ExportResult result = formats::exportPolicySet(*loaded.policies, *target);
    for (const formats::ExportNote& note : result.notes) {
        const SourceLocation at = loaded.sources.locate(note.pointer);
        std::fprintf(
            stderr, "%s\n",
            formatDiagnostic(formats::exportNoteDiagnostic(note, name, at.line, at.column)).c_str());
    }
    if (!result.ok()) {
        return fail(kInvalidInput, std::string(formats::exportTargetName(*target)) +
                                       " cannot express this policy file; nothing exported");
    }
    return writeOutput(args.value("output", "-"), result.text);
}

Command exportCommand() {
    Command c;
    c.name = "export";
    c.summary = "write a policy file as nginx, Envoy or HAProxy configuration";
    c.description =
        "Writes a policy file as nginx limit_req, Envoy local rate limit or HAProxy stick-table "
        "configuration. What the target cannot express is said in comments and printed as "
        "warnings; a policy it cannot approximate is refused (exit 2) and nothing is written.";
    c.positionals = {{"P.json", "The policy file (JSON).", Option::Kind::Input}};
    c.options = {
        Option::value("to", "TARGET", "The target: nginx, envoy or haproxy.").asRequired(),
        Option::output("output", "FILE", "Where to write the configuration (default: -).")
            .withShort('o'),
    };
    c.run = &runExport;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(exportCommand());

}  // namespace ratelab::cli
