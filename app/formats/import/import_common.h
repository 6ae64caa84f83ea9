#pragma once

// What the importers share: where something was written in the files an import read, the
// diagnostics it collects, and the policy file it builds. An importer writes the policy file a
// user would write (nlohmann's ordered JSON with the policy file's own field names) and the
// policy loader reads it, so an imported set passes every level a hand-written file passes.

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::formats {

using PolicyJson = nlohmann::ordered_json;

/// How the error of an import whose written policies the policy loader refuses begins (an
/// importer's bug, never the user's: the fuzz harnesses look for it).
inline constexpr std::string_view kImportedPoliciesDoNotLoad = "the imported policies do not load";

/// A place in one of the files an import read: an index into ImportLog's files, 1-based line
/// and column (characters; a UTF-8 sequence is one). file -1: no place (a whole import).
struct SourcePos {
    int file = -1;
    int line = 0;
    int column = 0;
};

/// The files an import read and every problem found in them. Not thread-safe; one per import.
class ImportLog {
public:
    /// Registers a file read (the main file first) and returns its index for SourcePos.
    int addFile(std::string path);
    const std::string& fileName(int file) const { return files_[file]; }
    const std::vector<std::string>& files() const { return files_; }

    void error(SourcePos at, std::string message);
    /// A setting carried over approximately or not at all: what the original does and what
    /// the import does instead. The same warning at the same place is kept once.
    void warning(SourcePos at, std::string message);
    bool hasErrors() const { return errors_ > 0; }

    /// The diagnostics in file order (files in the order read, then line and column).
    std::vector<Diagnostic> take();

private:
    void add(Diagnostic::Severity severity, SourcePos at, std::string message);

    std::vector<std::string> files_;
    std::vector<std::pair<SourcePos, Diagnostic>> diagnostics_;
    std::set<std::string> seen_;
    int errors_ = 0;
};

/// Policy names as the loader wants them (1 to 64 of [A-Za-z0-9_.-], starting with a letter or
/// digit), derived from the source's own names and kept unique within one import.
class PolicyNames {
public:
    /// `wanted` with every other character written "-", runs of them as one, cut to fit, and
    /// "-2", "-3", ... appended when the name was given before.
    std::string unique(std::string_view wanted);

private:
    std::set<std::string> taken_;
};

/// Whether `name` is a header name a policy can key by: 1 to 256 token characters (RFC 9110),
/// as the policy loader wants it.
bool isHeaderName(std::string_view name);

/// The key of a whole client address, as nginx's $binary_remote_addr and HAProxy's `src` key:
/// IPv4 /32 and IPv6 /128 (ratelab's default groups IPv6 by /64).
PolicyJson wholeAddressKey();

/// The policy set `file` describes, read by the policy loader. A file the loader refuses is the
/// importer's fault: each of the loader's errors becomes an error of the import (at `at`).
std::optional<PolicySet> loadImportedPolicies(const PolicyJson& file, ImportLog& log, SourcePos at);

/// An import's result: the policy set `file` describes when the log holds no error (loaded by
/// loadImportedPolicies), and the log's diagnostics.
struct ImportResult;
/// The text of the one file an import of this kind reads, with the file added to `log`; nullopt
/// when `files` is not one file (`oneFile` says what the kind reads) or it cannot be read, and
/// then `failed` is the import's answer.
std::optional<std::string> readSingleImportFile(const std::vector<std::string>& files,
                                                std::string_view oneFile, ImportLog& log,
                                                ImportResult& failed);

ImportResult finishImport(ImportLog& log, const std::optional<PolicyJson>& file, bool unreadable);

/// Reads `path` whole for an import (at most 16 MiB): nullopt with the reason in `error`.
std::optional<std::string> readImportFile(const std::string& path, std::string& error);

/// "FILE:LINE" of a position, for messages that point at another line.
std::string lineRef(const ImportLog& log, SourcePos at);

}  // namespace ratelab::formats
