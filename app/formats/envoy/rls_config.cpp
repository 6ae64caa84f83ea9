// Units, names, wildcards, and reading a configuration's files (a file or a directory). The
// tree of one file is mapped in rls_config_reader.cpp.

#include "formats/envoy/rls_config.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "formats/envoy/rls_config_reader.h"
#include "io/text_file.h"

namespace ratelab::formats::envoy {

namespace {

// A configuration file larger than this is refused unread: the original's files are a few
// kilobytes, the largest seen in the wild a few hundred.
constexpr std::size_t kMaxFileBytes = 16u << 20;

bool endsWith(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool isDirectory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool hasYamlExtension(std::string_view name) {
    return endsWith(name, ".yaml") || endsWith(name, ".yml");
}

Diagnostic unreadable(const std::string& file, const std::string& why) {
    Diagnostic d;
    d.file = file;
    d.message = why;
    return d;
}

}  // namespace

std::int64_t unitSeconds(RateUnit unit) {
    switch (unit) {
        case RateUnit::Second:
            return 1;
        case RateUnit::Minute:
            return 60;
        case RateUnit::Hour:
            return 3600;
        case RateUnit::Day:
            return 86400;
        case RateUnit::Week:
            return 7 * 86400;
        case RateUnit::Month:
            return 30 * 86400;
        case RateUnit::Year:
            return 365 * 86400;
    }
    return 1;
}

std::string_view unitName(RateUnit unit) {
    switch (unit) {
        case RateUnit::Second:
            return "second";
        case RateUnit::Minute:
            return "minute";
        case RateUnit::Hour:
            return "hour";
        case RateUnit::Day:
            return "day";
        case RateUnit::Week:
            return "week";
        case RateUnit::Month:
            return "month";
        case RateUnit::Year:
            return "year";
    }
    return "second";
}

std::optional<RateUnit> parseRateUnit(std::string_view name) {
    std::string lower(name);
    for (char& c : lower)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (RateUnit u : kRateUnits) {
        if (unitName(u) == lower) return u;
    }
    return std::nullopt;
}

std::string_view identityName(Identity identity) {
    switch (identity) {
        case Identity::RemoteAddress:
            return "remote_address";
        case Identity::Authorization:
            return "authorization";
        case Identity::None:
            break;
    }
    return {};
}

bool RateRule::named(std::string_view name) const {
    return std::any_of(limits.begin(), limits.end(),
                       [&](const RateLimitSpec& l) { return !l.name.empty() && l.name == name; });
}

const DomainConfig* RlsConfig::find(std::string_view domain) const {
    auto it = std::lower_bound(
        domains.begin(), domains.end(), domain,
        [](const DomainConfig& d, std::string_view name) { return d.domain < name; });
    return it != domains.end() && it->domain == domain ? &*it : nullptr;
}

bool wildcardMatches(std::string_view pattern, std::string_view text) {
    // The pattern's parts between stars: the first must start the text, the last end it, the
    // others follow in order, leftmost first, in what lies between.
    const std::size_t firstStar = pattern.find('*');
    if (firstStar == std::string_view::npos) return pattern == text;
    const std::size_t lastStar = pattern.rfind('*');
    const std::string_view head = pattern.substr(0, firstStar);
    const std::string_view tail = pattern.substr(lastStar + 1);
    if (text.size() < head.size() + tail.size()) return false;
    if (text.substr(0, head.size()) != head) return false;
    if (text.substr(text.size() - tail.size()) != tail) return false;
    std::string_view middle = text.substr(head.size(), text.size() - head.size() - tail.size());
    std::string_view rest = pattern.substr(firstStar + 1, lastStar - firstStar);
    while (!rest.empty()) {
        const std::size_t star = rest.find('*');
        const std::string_view part = rest.substr(0, star);
        rest = star == std::string_view::npos ? std::string_view() : rest.substr(star + 1);
        if (part.empty()) continue;
        const std::size_t at = middle.find(part);
        if (at == std::string_view::npos) return false;
        middle = middle.substr(at + part.size());
    }
    return true;
}

bool isRlsConfigPath(const std::string& path) {
    return hasYamlExtension(path) || isDirectory(path);
}

RlsLoadResult loadRlsConfig(const std::string& path, const RlsLoadOptions& options) {
    std::vector<std::string> files;
    if (isDirectory(path)) {
        DIR* dir = ::opendir(path.c_str());
        if (!dir) {
            RlsLoadResult out;
            out.unreadable = true;
            out.diagnostics.push_back(unreadable(path, "cannot read the directory"));
            return out;
        }
        while (const dirent* entry = ::readdir(dir)) {
            const std::string_view name = entry->d_name;
            // Dotfiles are skipped: a Kubernetes ConfigMap volume keeps every file a second
            // time under "..data/" and "..<timestamp>/", which the original reads unless told
            // to ignore dotfiles.
            if (name.empty() || name.front() == '.' || !hasYamlExtension(name)) continue;
            const std::string full = path + (endsWith(path, "/") ? "" : "/") + std::string(name);
            if (isDirectory(full)) continue;
            files.push_back(full);
        }
        ::closedir(dir);
        std::sort(files.begin(), files.end());
        if (files.empty()) {
            RlsLoadResult out;
            out.unreadable = true;
            out.diagnostics.push_back(
                unreadable(path,
                           "is a directory without any .yaml or .yml file (of Envoy's rate limit "
                           "service configuration)"));
            return out;
        }
    } else {
        files.push_back(path);
    }

    std::vector<RlsSource> sources;
    RlsLoadResult failed;
    for (const std::string& file : files) {
        std::string error;
        std::optional<std::string> text = io::readTextFile(file, kMaxFileBytes, &error);
        if (!text) {
            failed.unreadable = true;
            failed.diagnostics.push_back(unreadable(file, error));
            continue;
        }
        sources.push_back({file, std::move(*text)});
    }
    if (failed.unreadable) return failed;
    return parseRlsConfig(sources, options);
}

RlsLoadResult parseRlsConfig(const std::vector<RlsSource>& sources, const RlsLoadOptions& options) {
    RlsLoadResult out;
    RlsConfig config;
    for (const RlsSource& source : sources) {
        const std::size_t first = out.diagnostics.size();
        readRlsFile(source, options, config, out.diagnostics);
        // In file order, whichever pass found them.
        std::stable_sort(out.diagnostics.begin() + static_cast<std::ptrdiff_t>(first),
                         out.diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
                             return std::pair(a.line, a.column) < std::pair(b.line, b.column);
                         });
    }
    if (!hasErrors(out.diagnostics)) {
        std::sort(config.domains.begin(), config.domains.end(),
                  [](const DomainConfig& a, const DomainConfig& b) { return a.domain < b.domain; });
        out.config = std::move(config);
    }
    return out;
}

}  // namespace ratelab::formats::envoy
