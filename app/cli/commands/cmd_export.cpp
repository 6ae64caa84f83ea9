// ratelab-cli export --to nginx|envoy|haproxy|envoy-ratelimit [-o FILE|DIR] P.json
// Writes the policy file as another rate limiter's configuration. Approximations are printed
// as warnings (and written as comments in the output); a policy the target cannot approximate
// is an error, nothing is written, and the exit code is 2.

#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "formats/export/export_targets.h"
#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "formats/policy_export.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

int runExport(const Arguments& args) {
    std::optional<formats::ExportTarget> target = formats::parseExportTarget(args.value("to"));
    if (!target) {
        return fail(kUsage, "unknown target \"" + args.value("to") +
                                "\"; use nginx, envoy, haproxy or envoy-ratelimit");
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
        std::fprintf(stderr, "%s\n",
                     formatDiagnostic(formats::exportNoteDiagnostic(note, name, at.line, at.column))
                         .c_str());
    }
    if (!result.ok()) {
        return fail(kInvalidInput, std::string(formats::exportTargetName(*target)) +
                                       " cannot express this policy file; nothing exported");
    }
    const std::string output = args.value("output", "-");
    std::error_code error;
    if (*target == formats::ExportTarget::EnvoyRatelimit &&
        (output.ends_with("/") || std::filesystem::is_directory(output, error))) {
        // The service's runtime directory takes every file in it: the routes go beside.
        std::filesystem::create_directories(output, error);
        const auto [rls, routes] = formats::splitEnvoyRatelimitExport(result.text);
        const std::filesystem::path dir(output);
        const int written = writeOutput((dir / "ratelimit.yaml").string(), rls);
        if (written != kSuccess) return written;
        return writeOutput((dir / std::string(formats::envoy_ratelimit::kRoutesFileName)).string(),
                           routes);
    }
    return writeOutput(output, result.text);
}

Command exportCommand() {
    Command c;
    c.name = "export";
    c.summary =
        "write a policy file as nginx, Envoy, HAProxy or Envoy rate limit service "
        "configuration";
    c.description =
        "Writes a policy file as nginx limit_req, Envoy local rate limit or HAProxy stick-table "
        "configuration, or as envoyproxy/ratelimit's YAML with the Envoy routes whose "
        "rate_limits actions send its descriptors (envoy-ratelimit: one YAML stream of two "
        "documents, or with -o DIR the files DIR/ratelimit.yaml and DIR/routes.yaml). What the "
        "target cannot express is said in comments and printed as warnings; a policy it cannot "
        "approximate is refused (exit 2) and nothing is written.";
    c.positionals = {{"P.json", "The policy file (JSON).", Option::Kind::Input}};
    c.options = {
        Option::value("to", "TARGET", "The target: nginx, envoy, haproxy or envoy-ratelimit.")
            .asRequired(),
        Option::output("output", "FILE|DIR",
                       "Where to write the configuration (default: -); envoy-ratelimit: a "
                       "directory (existing, or ending in /) takes its two files.")
            .withShort('o'),
    };
    c.run = &runExport;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(exportCommand());

}  // namespace ratelab::cli
