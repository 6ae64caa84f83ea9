#include "ratelab/policy_file.h"

#include <algorithm>

#include "json/json_document.h"
#include "policy/policy_file_internal.h"

namespace ratelab {

void PolicySourceMap::add(std::string pointer, SourceLocation at) {
    locations_.emplace(std::move(pointer), at);
}

SourceLocation PolicySourceMap::locate(std::string_view pointer) const {
    std::string key(pointer);
    while (true) {
        if (auto it = locations_.find(key); it != locations_.end()) return it->second;
        if (key.empty()) return {};
        key.erase(key.rfind('/'));
    }
}

bool PolicyLoadResult::passed(CheckLevel level) const {
    for (std::size_t i = 0; i < diagnostics.size() && i < levels.size(); ++i) {
        if (levels[i] == level && diagnostics[i].severity == Diagnostic::Severity::Error) {
            return false;
        }
    }
    return true;
}

namespace policy {

void Diagnostics::settle() {
    while (levels_.size() < out_.size())
        levels_.push_back(CheckLevel::Schema);
}

void Diagnostics::error(CheckLevel level, const json::Value& at, std::string message) {
    report(Diagnostic::Severity::Error, level, {at.position().line, at.position().column},
           at.pointer(), std::move(message));
}

void Diagnostics::report(Diagnostic::Severity severity, CheckLevel level, SourceLocation at,
                         std::string pointer, std::string message) {
    settle();
    json::Position position{at.line, at.column};
    if (severity == Diagnostic::Severity::Error) {
        reader_.errorAt(position, std::move(pointer), std::move(message));
    } else {
        reader_.warningAt(position, std::move(pointer), std::move(message));
    }
    levels_.push_back(level);
}

bool Diagnostics::hasErrors() const {
    return ratelab::hasErrors(out_);
}

CheckContext::CheckContext(Diagnostics& sink, const PolicySourceMap& sources)
    : sink_(sink), sources_(sources) {}

void CheckContext::noteErrors(const std::vector<Diagnostic>& so_far) {
    for (const Diagnostic& d : so_far) {
        if (d.severity == Diagnostic::Severity::Error) dirty_.push_back(d.pointer);
    }
}

bool CheckContext::clean(std::string_view pointer) const {
    for (const std::string& dirty : dirty_) {
        if (dirty.size() < pointer.size()) {
            // An error at an ancestor ("/policies/1" when checking "/policies/1/key") counts
            // too, except at the root (a missing "version" says nothing about a policy).
            if (!dirty.empty() && pointer.substr(0, dirty.size()) == dirty &&
                pointer[dirty.size()] == '/') {
                return false;
            }
            continue;
        }
        if (dirty.compare(0, pointer.size(), pointer) == 0 &&
            (dirty.size() == pointer.size() || dirty[pointer.size()] == '/')) {
            return false;
        }
    }
    return true;
}

void CheckContext::error(CheckLevel level, const std::string& pointer, std::string message) {
    sink_.report(Diagnostic::Severity::Error, level, sources_.locate(pointer), pointer,
                 std::move(message));
    dirty_.push_back(pointer);
}

void CheckContext::warning(const std::string& pointer, std::string message) {
    sink_.report(Diagnostic::Severity::Warning, CheckLevel::Lint, sources_.locate(pointer), pointer,
                 std::move(message));
}

std::string policyPointer(std::size_t index) {
    return "/policies/" + std::to_string(index);
}

namespace {

void mapSources(const json::Value& value, PolicySourceMap& sources) {
    sources.add(value.pointer(), {value.position().line, value.position().column});
    for (const auto& item : value.items())
        mapSources(*item, sources);
    for (const json::Member& member : value.members())
        mapSources(*member.value, sources);
}

}  // namespace

}  // namespace policy

namespace {

PolicyLoadResult check(json::Document document, std::string_view fileName,
                       const PolicyCheckOptions& options) {
    PolicyLoadResult result;
    result.unreadable = document.unreadable;
    result.diagnostics = std::move(document.diagnostics);
    result.levels.assign(result.diagnostics.size(), CheckLevel::Syntax);
    if (!document.root) return result;

    // The tree is built even with duplicate keys (the first wins), so the schema level still
    // reports everything else; the duplicates alone make the file invalid.
    policy::mapSources(*document.root, result.sources);
    policy::Diagnostics sink(std::string(fileName), result.diagnostics, result.levels);
    PolicySet set;
    policy::readPolicySet(sink, *document.root, set);
    sink.settle();

    policy::CheckContext context(sink, result.sources);
    context.noteErrors(result.diagnostics);
    policy::checkSemantics(set, context);
    sink.settle();
    if (hasErrors(result.diagnostics)) return result;

    policy::checkLints(set, options.previous, context);
    sink.settle();
    result.policies = std::move(set);
    return result;
}

// A string over the size limit is kept as an empty placeholder: the schema's complaints about
// that placeholder (at the very same place as the syntax error) would only mislead.
void dropPlaceholderComplaints(PolicyLoadResult& result) {
    std::vector<Diagnostic> diagnostics;
    std::vector<CheckLevel> levels;
    for (std::size_t i = 0; i < result.diagnostics.size(); ++i) {
        const Diagnostic& d = result.diagnostics[i];
        bool shadowed = result.levels[i] != CheckLevel::Syntax &&
                        std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                                    [&](const Diagnostic& s) {
                                        return &s != &d && s.line == d.line &&
                                               s.column == d.column && s.pointer == d.pointer &&
                                               s.message.find("KiB limit") != std::string::npos;
                                    });
        if (shadowed) continue;
        diagnostics.push_back(d);
        levels.push_back(result.levels[i]);
    }
    result.diagnostics = std::move(diagnostics);
    result.levels = std::move(levels);
}

// Diagnostics in file order (stable, so that one place's problems keep their order).
void sortByPosition(PolicyLoadResult& result) {
    std::vector<std::size_t> order(result.diagnostics.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const Diagnostic& x = result.diagnostics[a];
        const Diagnostic& y = result.diagnostics[b];
        return std::pair(x.line, x.column) < std::pair(y.line, y.column);
    });
    std::vector<Diagnostic> diagnostics;
    std::vector<CheckLevel> levels;
    for (std::size_t i : order) {
        diagnostics.push_back(std::move(result.diagnostics[i]));
        levels.push_back(result.levels[i]);
    }
    result.diagnostics = std::move(diagnostics);
    result.levels = std::move(levels);
}

PolicyLoadResult checkAndOrder(json::Document document, std::string_view fileName,
                               const PolicyCheckOptions& options) {
    PolicyLoadResult result = check(std::move(document), fileName, options);
    dropPlaceholderComplaints(result);
    sortByPosition(result);
    return result;
}

}  // namespace

PolicyLoadResult loadPolicyFile(const std::string& path, const PolicyCheckOptions& options) {
    return checkAndOrder(json::parseFile(path), path, options);
}

PolicyLoadResult parsePolicyText(std::string_view text, std::string_view fileName,
                                 const PolicyCheckOptions& options) {
    return checkAndOrder(json::parse(text, fileName), fileName, options);
}

std::vector<Diagnostic> validatePolicySet(const PolicySet& policies, std::string_view fileName,
                                          const PolicyCheckOptions& options) {
    std::vector<Diagnostic> out;
    // What the canonical text cannot carry: durations finer than a millisecond, a prefix
    // alongside a pattern.
    for (std::size_t i = 0; i < policies.policies.size(); ++i) {
        const Policy& p = policies.policies[i];
        std::string at = policy::policyPointer(i);
        auto error = [&](std::string pointer, std::string message) {
            out.push_back(Diagnostic{Diagnostic::Severity::Error, std::string(fileName), 0, 0,
                                     std::move(pointer), std::move(message)});
        };
        if (p.budget.slotTtl % kNanosPerMilli != 0) {
            error(at + "/budget/slot_ttl_ms", "the budget slot TTL is not a whole number of ms");
        }
        if (p.storeTimeout % kNanosPerMilli != 0) {
            error(at + "/store_timeout_ms", "the store timeout is not a whole number of ms");
        }
        if (!p.match.pathPattern.empty() && p.match.pathPrefix != "/" &&
            !p.match.pathPrefix.empty()) {
            error(at + "/match/path_prefix",
                  "give path_prefix or path_pattern, not both (path_prefix stays \"/\")");
        }
    }
    PolicyLoadResult checked = parsePolicyText(savePolicyText(policies), fileName, options);
    for (Diagnostic& d : checked.diagnostics) {
        d.line = 0;  // lines of the canonical text would mislead; the pointer says where
        d.column = 0;
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace ratelab
