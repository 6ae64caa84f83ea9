#include "formats/import/import_common.h"

#include <algorithm>

#include "formats/import/policy_import.h"
#include "io/text_file.h"
#include "ratelab/policy_file.h"

namespace ratelab::formats {

namespace {

constexpr std::size_t kMaxImportBytes = 16u << 20;
constexpr std::size_t kMaxPolicyName = 64;

bool nameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

}  // namespace

int ImportLog::addFile(std::string path) {
    files_.push_back(std::move(path));
    return static_cast<int>(files_.size()) - 1;
}

void ImportLog::error(SourcePos at, std::string message) {
    add(Diagnostic::Severity::Error, at, std::move(message));
}

void ImportLog::warning(SourcePos at, std::string message) {
    add(Diagnostic::Severity::Warning, at, std::move(message));
}

void ImportLog::add(Diagnostic::Severity severity, SourcePos at, std::string message) {
    Diagnostic d;
    d.severity = severity;
    d.file = at.file >= 0 && at.file < static_cast<int>(files_.size()) ? files_[at.file] : "";
    d.line = at.line;
    d.column = at.line > 0 ? std::max(1, at.column) : 0;
    d.message = std::move(message);
    if (!seen_.insert(formatDiagnostic(d)).second) return;
    if (severity == Diagnostic::Severity::Error) ++errors_;
    diagnostics_.emplace_back(at, std::move(d));
}

std::vector<Diagnostic> ImportLog::take() {
    std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const auto& a, const auto& b) {
        const SourcePos& x = a.first;
        const SourcePos& y = b.first;
        if (x.file != y.file) return x.file < y.file;
        if (x.line != y.line) return x.line < y.line;
        return x.column < y.column;
    });
    std::vector<Diagnostic> out;
    out.reserve(diagnostics_.size());
    for (auto& [at, d] : diagnostics_)
        out.push_back(std::move(d));
    diagnostics_.clear();
    seen_.clear();
    errors_ = 0;
    return out;
}

std::string PolicyNames::unique(std::string_view wanted) {
    std::string base;
    for (char c : wanted) {
        if (nameChar(c)) {
            base.push_back(c);
        } else if (!base.empty() && base.back() != '-') {
            base.push_back('-');
        }
    }
    while (!base.empty() && !nameChar(base.front()))
        base.erase(base.begin());
    while (!base.empty() && (base.front() == '-' || base.front() == '.' || base.front() == '_'))
        base.erase(base.begin());
    while (!base.empty() && base.back() == '-')
        base.pop_back();
    if (base.empty()) base = "limit";
    base.resize(std::min(base.size(), kMaxPolicyName - 4));
    std::string name = base;
    for (int n = 2; !taken_.insert(name).second; ++n)
        name = base + "-" + std::to_string(n);
    return name;
}

bool isHeaderName(std::string_view name) {
    if (name.empty() || name.size() > 256) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

PolicyJson wholeAddressKey() {
    return PolicyJson{{"source", "peer"}, {"ipv4_prefix", 32}, {"ipv6_prefix", 128}};
}

std::optional<PolicySet> loadImportedPolicies(const PolicyJson& file, ImportLog& log,
                                              SourcePos at) {
    // Text that is not UTF-8 is written as U+FFFD rather than thrown on: the loader then says
    // what is wrong with it, as an error of the import.
    const std::string text = file.dump(2, ' ', false, PolicyJson::error_handler_t::replace);
    PolicyLoadResult loaded = parsePolicyText(text, "imported policy");
    for (const Diagnostic& d : loaded.diagnostics) {
        if (d.severity != Diagnostic::Severity::Error) continue;
        log.error(at, std::string(kImportedPoliciesDoNotLoad) + " (an importer bug): " + d.message +
                          (d.pointer.empty() ? "" : " (at " + d.pointer + ")"));
    }
    return loaded.policies;
}

std::optional<std::string> readSingleImportFile(const std::vector<std::string>& files,
                                                std::string_view oneFile, ImportLog& log,
                                                ImportResult& failed) {
    if (files.size() != 1) {
        log.addFile(files.empty() ? "" : files.front());
        log.error(SourcePos{0, 0, 0}, std::string(oneFile));
        failed = finishImport(log, std::nullopt, false);
        return std::nullopt;
    }
    log.addFile(files.front());
    std::string error;
    std::optional<std::string> text = readImportFile(files.front(), error);
    if (!text) {
        log.error(SourcePos{0, 0, 0}, error);
        failed = finishImport(log, std::nullopt, true);
    }
    return text;
}

ImportResult finishImport(ImportLog& log, const std::optional<PolicyJson>& file, bool unreadable) {
    ImportResult result;
    result.unreadable = unreadable;
    if (file && !log.hasErrors())
        result.policies = loadImportedPolicies(*file, log, SourcePos{0, 0, 0});
    if (log.hasErrors()) result.policies.reset();
    result.diagnostics = log.take();
    return result;
}

std::optional<std::string> readImportFile(const std::string& path, std::string& error) {
    return io::readTextFile(path, kMaxImportBytes, &error);
}

std::string lineRef(const ImportLog& log, SourcePos at) {
    if (at.file < 0) return "";
    return log.fileName(at.file) + ":" + std::to_string(at.line);
}

}  // namespace ratelab::formats
