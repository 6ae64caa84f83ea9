#pragma once

// Imports other products' rate limits as a ratelab policy set: nginx limit_req, HAProxy stick
// tables, Traefik's rateLimit middleware, Kong's rate-limiting plugin, envoyproxy/ratelimit's
// configuration with Envoy's route actions, and Envoy's local rate limit filter. Each reader is a
// front end: the product's own grammar into a tree that keeps FILE:LINE:COLUMN, then the tree
// mapped to policies in the product's own counting, then every problem at once. What each product's
// settings become, and what is carried over only approximately or not at all, is in docs/IMPORT.md.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::formats {

enum class ImportKind : std::uint8_t { Nginx, Haproxy, Traefik, Kong, EnvoyRatelimit, EnvoyLocal };

/// "nginx", "haproxy", "traefik", "kong", "envoy-ratelimit", "envoy-local" (one list, also
/// read by --help, the CLI's KIND:PATH parser and the workbench's kind chooser).
std::string_view importKindName(ImportKind kind);
/// The kind `name` says, among importKinds(); nullopt for any other name.
std::optional<ImportKind> parseImportKind(std::string_view name);
/// The kinds this build reads, in the order of the list above.
std::span<const ImportKind> importKinds();
/// Their names, joined by ", " (for --help and usage errors).
std::string importKindNames();

/// Guesses the kind from a file's name and content (workbench: "detected from the file").
std::optional<ImportKind> detectImportKind(const std::string& path, std::string_view text);

struct ImportResult {
    /// The policies, when the files could be read (warnings may remain).
    std::optional<PolicySet> policies;
    /// Every problem at once, FILE:LINE:COLUMN (ratelab::Diagnostic, ratelab/diagnostic.h):
    /// warnings for what is carried over approximately or not at all (what the original does,
    /// what the import does instead); errors for what cannot be read.
    std::vector<Diagnostic> diagnostics;
    /// A named file does not exist or cannot be opened (the CLI exits 74; else 2 on errors).
    bool unreadable = false;
};

struct ImportOptions {
    /// envoy-ratelimit: the Envoy route configuration whose rate_limits actions build the
    /// descriptors (`--envoy-actions FILE`); "" maps the descriptor keys by their names.
    std::string envoyActions;
};

/// Reads `files` (nginx: the main file, includes followed relative to it, globs) as `kind`.
/// Thread-safe.
ImportResult importPolicies(ImportKind kind, const std::vector<std::string>& files,
                            const ImportOptions& options = {});

}  // namespace ratelab::formats
