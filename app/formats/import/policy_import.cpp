#include "formats/import/policy_import.h"

#include <algorithm>

#include "formats/import/envoy_local/envoy_local_import.h"
#include "formats/import/envoy_ratelimit/envoy_rls_import.h"
#include "formats/import/haproxy/haproxy_import.h"
#include "formats/import/kong/kong_import.h"
#include "formats/import/nginx/nginx_import.h"
#include "formats/import/traefik/traefik_import.h"

namespace ratelab::formats {

namespace {

// The kinds with a reader, in ImportKind's order.
constexpr ImportKind kImportKinds[] = {ImportKind::Nginx,          ImportKind::Haproxy,
                                       ImportKind::Traefik,        ImportKind::Kong,
                                       ImportKind::EnvoyRatelimit, ImportKind::EnvoyLocal};

bool endsWith(const std::string& path, std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool contains(std::string_view text, std::string_view what) {
    return text.find(what) != std::string_view::npos;
}

}  // namespace

std::string_view importKindName(ImportKind kind) {
    switch (kind) {
        case ImportKind::Nginx:
            return "nginx";
        case ImportKind::Haproxy:
            return "haproxy";
        case ImportKind::Traefik:
            return "traefik";
        case ImportKind::Kong:
            return "kong";
        case ImportKind::EnvoyRatelimit:
            return "envoy-ratelimit";
        case ImportKind::EnvoyLocal:
            return "envoy-local";
    }
    return "nginx";
}

std::optional<ImportKind> parseImportKind(std::string_view name) {
    for (ImportKind k : kImportKinds) {
        if (importKindName(k) == name) return k;
    }
    return std::nullopt;
}

std::span<const ImportKind> importKinds() {
    return kImportKinds;
}

std::string importKindNames() {
    std::string out;
    for (ImportKind k : kImportKinds)
        out += (out.empty() ? "" : ", ") + std::string(importKindName(k));
    return out;
}

std::optional<ImportKind> detectImportKind(const std::string& path, std::string_view text) {
    // What each product's files say first: nginx's limit_req, HAProxy's sections and stick
    // tables; then their usual names.
    if (contains(text, "limit_req_zone") || contains(text, "limit_req ")) return ImportKind::Nginx;
    if (contains(text, "stick-table") || contains(text, "track-sc") ||
        (contains(text, "frontend ") && contains(text, "backend ")))
        return ImportKind::Haproxy;
    if (contains(text, "_format_version")) return ImportKind::Kong;
    if (contains(text, "envoy.filters.http.local_ratelimit") ||
        contains(text, "local_ratelimit.v3.LocalRateLimit"))
        return ImportKind::EnvoyLocal;
    if (contains(text, "descriptors:") && contains(text, "domain:") &&
        (contains(text, "rate_limit:") || contains(text, "rate_limits:")))
        return ImportKind::EnvoyRatelimit;
    if (contains(text, "rateLimit") && (contains(text, "middlewares") || contains(text, "routers")))
        return ImportKind::Traefik;
    if (endsWith(path, "nginx.conf") || endsWith(path, ".nginx")) return ImportKind::Nginx;
    if (endsWith(path, "haproxy.cfg") || endsWith(path, ".cfg")) return ImportKind::Haproxy;
    return std::nullopt;
}

ImportResult importPolicies(ImportKind kind, const std::vector<std::string>& files,
                            const ImportOptions& options) {
    switch (kind) {
        case ImportKind::Nginx:
            return nginx::importNginx(files);
        case ImportKind::Haproxy:
            return haproxy::importHaproxy(files);
        case ImportKind::Traefik:
            return traefik::importTraefik(files);
        case ImportKind::Kong:
            return kong::importKong(files);
        case ImportKind::EnvoyRatelimit:
            return envoy_ratelimit::importEnvoyRatelimit(files, options.envoyActions);
        case ImportKind::EnvoyLocal:
            return envoy_local::importEnvoyLocal(files);
    }
    return {};
}

}  // namespace ratelab::formats
