// A limit_req_zone key (nginx's complex value: text and $variables) as a ratelab key.

#include <algorithm>
#include <cctype>
#include <map>

#include "formats/export/export_targets.h"
#include "formats/import/nginx/nginx_model.h"
#include "ratelab/ip_address.h"

namespace ratelab::formats::nginx {

namespace {

struct KeyItem {
    bool variable = false;
    std::string text;  // the literal, or the variable's name
};

// ngx_http_script_compile's reading of a complex value: "$name" ([A-Za-z0-9_]), "${name}",
// "$1".."$9" captures, everything else literal.
bool splitComplexValue(std::string_view value, std::vector<KeyItem>& items, std::string& error) {
    std::size_t i = 0;
    while (i < value.size()) {
        if (value[i] != '$') {
            const std::size_t next = value.find('$', i);
            const std::size_t end = next == std::string_view::npos ? value.size() : next;
            items.push_back(KeyItem{false, std::string(value.substr(i, end - i))});
            i = end;
            continue;
        }
        ++i;
        std::string name;
        if (i < value.size() && value[i] == '{') {
            const std::size_t close = value.find('}', i);
            if (close == std::string_view::npos) {
                error = "the variable name is missing \"}\"";
                return false;
            }
            name = std::string(value.substr(i + 1, close - i - 1));
            i = close + 1;
        } else {
            while (i < value.size() &&
                   (std::isalnum(static_cast<unsigned char>(value[i])) || value[i] == '_'))
                name.push_back(value[i++]);
        }
        if (name.empty()) {
            error = "invalid variable name";
            return false;
        }
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        items.push_back(KeyItem{true, name});
    }
    return true;
}

// nginx's built-in variables (ngx_http_variables.c and the modules of a common build) that do
// not depend on the request in a way a key could use, but exist: a key naming one is accepted
// by nginx.
bool builtinVariable(std::string_view name) {
    static const char* const kNames[] = {"binary_remote_addr",
                                         "remote_addr",
                                         "remote_port",
                                         "realip_remote_addr",
                                         "realip_remote_port",
                                         "proxy_protocol_addr",
                                         "proxy_protocol_port",
                                         "server_addr",
                                         "server_port",
                                         "server_protocol",
                                         "scheme",
                                         "https",
                                         "request_uri",
                                         "uri",
                                         "document_uri",
                                         "request",
                                         "document_root",
                                         "realpath_root",
                                         "query_string",
                                         "args",
                                         "is_args",
                                         "request_filename",
                                         "server_name",
                                         "request_method",
                                         "remote_user",
                                         "bytes_sent",
                                         "body_bytes_sent",
                                         "pipe",
                                         "request_completion",
                                         "request_body",
                                         "request_body_file",
                                         "request_length",
                                         "request_time",
                                         "request_id",
                                         "status",
                                         "connection",
                                         "connection_requests",
                                         "connection_time",
                                         "nginx_version",
                                         "hostname",
                                         "pid",
                                         "msec",
                                         "time_iso8601",
                                         "time_local",
                                         "content_type",
                                         "content_length",
                                         "host",
                                         "limit_rate",
                                         "limit_req_status",
                                         "limit_conn_status",
                                         "cookie",
                                         "date_local",
                                         "date_gmt",
                                         "fastcgi_script_name",
                                         "fastcgi_path_info",
                                         "gzip_ratio",
                                         "uid_got",
                                         "uid_set",
                                         "uid_reset",
                                         "invalid_referer",
                                         "secure_link",
                                         "secure_link_expires",
                                         "upstream_addr",
                                         "upstream_status",
                                         "upstream_response_time",
                                         "geoip_country_code",
                                         "ssl_client_s_dn",
                                         "ssl_client_fingerprint",
                                         "ssl_session_id",
                                         "ssl_server_name",
                                         "ssl_protocol",
                                         "ssl_cipher"};
    for (const char* n : kNames) {
        if (name == n) return true;
    }
    for (std::string_view prefix :
         {"http_", "sent_http_", "sent_trailer_", "cookie_", "arg_", "upstream_http_",
          "upstream_cookie_", "upstream_trailer_", "ssl_", "geoip_", "tcpinfo_"}) {
        if (name.starts_with(prefix) && name.size() > prefix.size()) return true;
    }
    return false;
}

// The directive that defines $name: a map or geo (at the http level), a set, a split_clients.
const NginxDirective* definitionOf(const std::vector<NginxDirective>& directives,
                                   std::string_view name) {
    const std::string want = "$" + std::string(name);
    for (const NginxDirective& d : directives) {
        const std::string& n = d.name();
        if (n == "map" && d.argumentCount() == 2 && d.words[2].text == want) return &d;
        if (n == "split_clients" && d.argumentCount() == 2 && d.words[2].text == want) return &d;
        if (n == "geo" && d.argumentCount() >= 1 && d.words.back().text == want) return &d;
        if (n == "set" && d.argumentCount() >= 1 && d.words[1].text == want) return &d;
        if (const NginxDirective* inner = definitionOf(d.children, name)) return inner;
    }
    return nullptr;
}

enum class Part { Peer, Header, Method, Route, Constant };

struct Classified {
    Part part = Part::Constant;
    std::string header;  // Part::Header: the header's name
};

// The nginx text of a header variable's name: http_x_api_key is the header X-Api-Key.
std::string headerName(std::string_view var) {
    std::string out(var.substr(5));
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
}

// geo $g { default 1; 10.0.0.0/8 0; } + map $g $key { 0 ""; 1 $binary_remote_addr; }: the key
// is the variable the map gives the limited clients, and the clients given "" are not limited.
struct AllowList {
    std::string variable;            // what the limited clients are keyed by
    std::vector<std::string> cidrs;  // clients whose key is empty
};

std::optional<AllowList> allowListOf(const NginxDirective& map,
                                     const std::vector<NginxDirective>& all) {
    if (map.name() != "map" || !map.words[1].text.starts_with("$")) return std::nullopt;
    const NginxDirective* geo = definitionOf(all, map.words[1].text.substr(1));
    if (!geo || geo->name() != "geo") return std::nullopt;
    if (geo->argumentCount() == 2 && geo->words[1].text != "$remote_addr" &&
        geo->words[1].text != "$binary_remote_addr")
        return std::nullopt;
    std::map<std::string, std::string> results;
    std::optional<std::string> mapDefault;
    for (const NginxDirective& e : map.children) {
        if (e.argumentCount() != 1) return std::nullopt;  // hostnames, volatile, include
        const std::string& from = e.name();
        if (from == "default") {
            mapDefault = e.words[1].text;
        } else if (from.starts_with("~") || from == "hostnames") {
            return std::nullopt;
        } else {
            results[from] = e.words[1].text;
        }
    }
    auto resultOf = [&](const std::string& v) {
        auto it = results.find(v);
        return it != results.end() ? it->second : mapDefault.value_or("");
    };
    AllowList out;
    std::optional<std::string> geoDefault;
    std::vector<std::pair<std::string, std::string>> entries;
    for (const NginxDirective& e : geo->children) {
        if (e.argumentCount() != 1) return std::nullopt;
        const std::string& from = e.name();
        if (from == "default") {
            geoDefault = e.words[1].text;
        } else if (from == "ranges" || from == "proxy" || from == "delete" || from == "include" ||
                   from == "proxy_recursive") {
            return std::nullopt;
        } else {
            entries.emplace_back(from, e.words[1].text);
        }
    }
    const std::string limitedBy = resultOf(geoDefault.value_or(""));
    if (limitedBy.size() < 2 || limitedBy.front() != '$') return std::nullopt;
    out.variable = limitedBy.substr(1);
    for (const auto& [cidr, value] : entries) {
        const std::string r = resultOf(value);
        if (r.empty()) {
            // An entry nginx's geo would refuse leaves the key unrecognised, not half-read.
            const std::optional<Cidr> network = Cidr::parse(cidr);
            if (!network) return std::nullopt;
            out.cidrs.push_back(network->toString());
        } else if (r != limitedBy) {
            return std::nullopt;
        }
    }
    return out;
}

// How a `map $remote_addr $k { ... default $remote_addr; }` groups client addresses, when its
// entries are exactly those of nginxAddressMap (the export's own map: IPv4 by one prefix, IPv6
// by another); nullopt for any other map.
struct AddressGrouping {
    int ipv4Prefix = 32;
    int ipv6Prefix = 128;
};

std::optional<AddressGrouping> addressGroupingOf(const NginxDirective& map) {
    if (map.name() != "map" || map.words[1].text != "$remote_addr") return std::nullopt;
    std::vector<NginxMapEntry> entries;
    bool defaultIsAddress = false;
    for (const NginxDirective& e : map.children) {
        if (e.words.size() != 2) return std::nullopt;
        if (e.name() == "default") {
            defaultIsAddress = e.words[1].text == "$remote_addr";
        } else if (e.name().starts_with("~")) {
            entries.push_back({e.name().substr(1), e.words[1].text});
        } else {
            return std::nullopt;
        }
    }
    if (!defaultIsAddress) return std::nullopt;
    for (int v4 = 8; v4 <= 32; v4 += 8) {
        for (int v6 = 16; v6 <= 128; v6 += 16) {
            const std::vector<NginxMapEntry> want = nginxAddressMap(v4, v6);
            if (std::equal(entries.begin(), entries.end(), want.begin(), want.end(),
                           [](const NginxMapEntry& a, const NginxMapEntry& b) {
                               return a.pattern == b.pattern && a.value == b.value;
                           }))
                return AddressGrouping{v4, v6};
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<ZoneKey> zoneKey(const NginxWord& word, const NginxConfig& config, ImportLog& log) {
    std::vector<KeyItem> items;
    std::string error;
    if (!splitComplexValue(word.text, items, error)) {
        log.error(word.at, error + " in the key \"" + word.text + "\"");
        return std::nullopt;
    }
    ZoneKey out;
    std::vector<std::string> parts;
    std::vector<std::string> notes;
    bool literal = false, peer = false;
    int headers = 0;
    std::optional<AddressGrouping> grouping;
    auto addPart = [&parts](const std::string& p) {
        if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    };
    for (const KeyItem& item : items) {
        if (!item.variable) {
            literal = literal || !item.text.empty();
            continue;
        }
        std::string var = item.text;
        if (!var.empty() && std::isdigit(static_cast<unsigned char>(var.front()))) {
            log.warning(word.at, "the key uses the regex capture $" + var +
                                     ", which no ratelab key can: the zone is not imported");
            return std::nullopt;
        }
        if (!builtinVariable(var)) {
            const NginxDirective* def = definitionOf(config.directives, var);
            if (!def) {
                log.warning(word.at, "unknown \"" + var +
                                         "\" variable (nginx refuses it unless a module "
                                         "defines it): the zone is not imported");
                return std::nullopt;
            }
            std::optional<AllowList> allow = allowListOf(*def, config.directives);
            if (std::optional<AddressGrouping> g = addressGroupingOf(*def)) {
                grouping = g;
                var = "remote_addr";
            } else if (allow && builtinVariable(allow->variable)) {
                notes.push_back("$" + var + " (" + def->name() + " at " + lineRef(log, def->at()) +
                                ") gives $" + allow->variable +
                                (allow->cidrs.empty()
                                     ? std::string()
                                     : ", and an empty key, which nginx does not limit, to " +
                                           std::to_string(allow->cidrs.size()) +
                                           " address ranges: they bypass the policy"));
                out.bypassCidrs.insert(out.bypassCidrs.end(), allow->cidrs.begin(),
                                       allow->cidrs.end());
                var = allow->variable;
            } else {
                log.warning(word.at, "the key uses $" + var + ", which the " + def->name() +
                                         " at " + lineRef(log, def->at()) +
                                         " defines in a way the import does not follow: the "
                                         "zone is not imported");
                return std::nullopt;
            }
        }
        if (var == "binary_remote_addr" || var == "remote_addr" || var == "realip_remote_addr") {
            addPart("peer");
            peer = true;
        } else if (var.starts_with("http_")) {
            addPart("header:" + headerName(var));
            ++headers;
        } else if (var == "host") {
            addPart("header:Host");
            ++headers;
            notes.push_back(
                "$host (the Host header in lower case without its port, else the "
                "server name) becomes the Host header as sent");
        } else if (var == "request_method") {
            addPart("method");
        } else if (var == "server_name" || var == "server_addr" || var == "server_port" ||
                   var == "scheme" || var == "https" || var == "hostname" ||
                   var == "nginx_version") {
            literal = true;  // the same for every request of a server
        } else if (var == "uri" || var == "request_uri" || var == "document_uri") {
            addPart("route");
            notes.push_back("$" + var +
                            " gives each path its own bucket; ratelab has no path key, so the "
                            "key uses the policy's route (one bucket for every path it covers)");
        } else {
            log.warning(word.at, "the key uses $" + var +
                                     ", which no ratelab key part says: the zone is not "
                                     "imported");
            return std::nullopt;
        }
    }
    if (parts.empty()) {
        out.shared = true;
        out.key = PolicyJson{{"source", "composite"}, {"parts", {"route"}}};
        out.description = "one bucket for every request";
    } else if (parts.size() == 1 && peer) {
        out.key = wholeAddressKey();
        out.description = "the client address";
        if (grouping) {
            out.key["ipv4_prefix"] = grouping->ipv4Prefix;
            out.key["ipv6_prefix"] = grouping->ipv6Prefix;
            out.description += " grouped by IPv4 /" + std::to_string(grouping->ipv4Prefix) +
                               " and IPv6 /" + std::to_string(grouping->ipv6Prefix);
        }
    } else if (parts.size() == 1 && headers == 1) {
        const std::string name = parts[0].substr(7);
        out.key = PolicyJson{
            {"source", "header"}, {"header", name}, {"when_missing", literal ? "shared" : "skip"}};
        out.description = "the header " + name;
    } else {
        out.key = PolicyJson{{"source", "composite"}, {"parts", parts}};
        if (peer) {
            out.key["ipv4_prefix"] = 32;
            out.key["ipv6_prefix"] = 128;
        }
        if (headers > 0) out.key["when_missing"] = peer ? "peer" : literal ? "shared" : "skip";
        if (headers > 1 || (peer && parts.size() > 2 && headers > 0)) {
            notes.push_back(
                "nginx joins the parts' text, so a missing header leaves the others' text as "
                "the key; ratelab keys such a request by " +
                std::string(peer      ? "the client address alone"
                            : literal ? "one shared bucket"
                                      : "nothing (not limited)"));
        }
        out.description = "the key parts";
        for (const std::string& p : parts)
            out.description += " " + p;
    }
    if (peer && grouping && parts.size() > 1) {
        out.key["ipv4_prefix"] = grouping->ipv4Prefix;
        out.key["ipv6_prefix"] = grouping->ipv6Prefix;
    }
    if (peer && !grouping) {
        notes.push_back(
            "nginx keys each IPv6 address on its own; the import keeps that (ipv6_prefix 128), "
            "where ratelab would group a /64 that one client holds");
    }
    for (const std::string& note : notes)
        log.warning(word.at, note);
    PolicyJson signature = out.key;
    signature["bypass"] = out.bypassCidrs;
    out.signature = signature.dump(-1, ' ', false, PolicyJson::error_handler_t::replace);
    return out;
}

}  // namespace ratelab::formats::nginx
