// ratelab-cli import --from KIND FILE... [--envoy-actions ROUTES.yaml] [-o OUT.json]
// Reads another product's rate-limit configuration and writes the ratelab policy file that
// decides as it does. Every setting carried over approximately or not at all is a warning at
// FILE:LINE:COLUMN on stderr; a file that cannot be read as that product's is an error (exit 2,
// nothing written); a file that cannot be opened exits 74.

#include <string>

#include "cli/command.h"
#include "cli/inputs.h"
#include "cli/outputs.h"
#include "formats/import/policy_import.h"
#include "ratelab/policy_file.h"

namespace ratelab::cli {

namespace {

int runImport(const Arguments& args) {
    const std::optional<formats::ImportKind> kind = formats::parseImportKind(args.value("from"));
    if (!kind) {
        return fail(kUsage, "unknown kind \"" + args.value("from") + "\"; use one of " +
                                formats::importKindNames());
    }
    formats::ImportOptions options;
    options.envoyActions = args.value("envoy-actions");
    if (!options.envoyActions.empty() && *kind != formats::ImportKind::EnvoyRatelimit)
        return fail(kUsage, "--envoy-actions is read only with --from envoy-ratelimit");
    const formats::ImportResult imported =
        formats::importPolicies(*kind, args.positionals(), options);
    const bool errors = printDiagnostics(imported.diagnostics);
    if (imported.unreadable) return fail(kIoError, "a file cannot be read; nothing imported");
    if (errors || !imported.policies) {
        return fail(kInvalidInput, std::string(formats::importKindName(*kind)) +
                                       " configuration has errors; nothing imported");
    }
    return writeOutput(args.value("output", "-"), savePolicyText(*imported.policies));
}

Command importCommand() {
    Command c;
    c.name = "import";
    c.summary = "read another product's rate limits as a ratelab policy file";
    c.description =
        "Reads the rate limits of another product's configuration (KIND: " +
        formats::importKindNames() +
        ") and writes the policy file that decides as they do. nginx reads one main file and "
        "follows its includes; HAProxy reads its files in order, as haproxy -f A -f B; Traefik "
        "merges its dynamic configuration files (YAML, or TOML for *.toml); Kong reads one "
        "declarative kong.yml; envoy-ratelimit reads envoyproxy/ratelimit's YAML files (or a "
        "directory of them) with, in --envoy-actions, the Envoy route configuration whose "
        "rate_limits actions build the descriptors; envoy-local reads one Envoy YAML file with "
        "the local rate limit filter. "
        "Whatever is carried over approximately or not at all is a warning at FILE:LINE:COLUMN "
        "on stderr, saying what the original does and what the import does instead; a file "
        "that cannot be read as KIND is an error (exit 2) and nothing is written. Every command "
        "that takes --policy also takes KIND:PATH, importing on the fly. docs/IMPORT.md says "
        "what each setting becomes.";
    c.positionals = {{"FILE", "The configuration files.", Option::Kind::Value, true}};
    c.options = {
        Option::value("from", "KIND", "The product: " + formats::importKindNames() + ".")
            .asRequired(),
        Option::value("envoy-actions", "ROUTES.yaml",
                      "envoy-ratelimit: the Envoy route configuration (virtual hosts, routes "
                      "and their rate_limits actions); without it the descriptor keys are read "
                      "by their names."),
        Option::output("output", "OUT.json", "Where to write the policy file (default: -).")
            .withShort('o'),
    };
    c.run = &runImport;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(importCommand());

}  // namespace ratelab::cli
