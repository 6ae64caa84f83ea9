// What a track-sc rule tracks, as a ratelab key.

#include <algorithm>

#include "formats/import/haproxy/haproxy_import.h"

namespace ratelab::formats::haproxy {

namespace {

std::optional<int> prefixArg(const std::string& text, int max) {
    if (text.empty() || text.size() > 3 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    const int n = std::stoi(text);
    if (n < 1 || n > max) return std::nullopt;
    return n;
}

std::string tableTypeName(Table::Type type) {
    switch (type) {
        case Table::Type::Ip:
            return "ip";
        case Table::Type::Ipv6:
            return "ipv6";
        case Table::Type::Integer:
            return "integer";
        case Table::Type::String:
            return "string";
        case Table::Type::Binary:
            return "binary";
    }
    return "ip";
}

}  // namespace

std::optional<PolicyJson> trackedKey(const Sample& sample, SourcePos at, const Table& table,
                                     ImportLog& log) {
    const std::string& f = sample.fetch;
    PolicyJson key;
    std::vector<std::string> notes;
    bool address = false;
    if (f == "src") {
        key = wholeAddressKey();
        address = true;
    } else if (f == "req.hdr" || f == "hdr" || f == "req.fhdr" || f == "req.hdr_ip" ||
               f == "hdr_ip") {
        if (sample.args.empty() || sample.args[0].empty()) {
            log.error(at, "'" + sample.text + "': missing header name");
            return std::nullopt;
        }
        const std::string& name = sample.args[0];
        if (!isHeaderName(name)) {
            log.error(at, "'" + sample.text + "': \"" + name + "\" is not a header name");
            return std::nullopt;
        }
        key = PolicyJson{{"source", "header"}, {"header", name}, {"when_missing", "skip"}};
        if (f != "req.fhdr")
            notes.push_back(f + "(" + name +
                            ") is the last comma-separated value of the header's last line; "
                            "ratelab keys by the header's whole value");
        if (table.type == Table::Type::String) {
            notes.push_back("table '" + table.name + "' keeps " +
                            std::to_string(table.length - (table.lengthSet ? 0 : 1)) +
                            " characters of a string key, so values sharing them share a "
                            "counter; ratelab keys by the whole value (an empty header is "
                            "the key \"\" for HAProxy, skipped by the import)");
        } else if (table.type == Table::Type::Ip || table.type == Table::Type::Ipv6) {
            notes.push_back("table '" + table.name +
                            "' keys the header's value as an address; "
                            "ratelab keys by its text");
        }
    } else if (f == "base32+src") {
        key = PolicyJson{{"source", "composite"},
                         {"parts", {"route", "peer"}},
                         {"ipv4_prefix", 32},
                         {"ipv6_prefix", 128}};
        notes.push_back(
            "base32+src counts each client per Host and path; ratelab has no path "
            "key, so the key is the policy's route and the client address (one "
            "counter for every path the route covers)");
    } else if (f == "path" || f == "base" || f == "base32" || f == "url" || f == "base32") {
        key = PolicyJson{{"source", "composite"}, {"parts", {"route"}}};
        notes.push_back(f +
                        " counts each path on its own; ratelab has no path key, so every "
                        "path the policy's route covers shares one counter");
    } else {
        log.warning(at, "track-sc on '" + sample.text +
                            "': no ratelab key says it; the limits counted by it are not "
                            "imported");
        return std::nullopt;
    }
    for (const Sample::Converter& c : sample.converters) {
        if (c.name == "ipmask" && address) {
            std::optional<int> v4 = c.args.empty() ? std::nullopt : prefixArg(c.args[0], 32);
            std::optional<int> v6 =
                c.args.size() < 2 ? std::optional<int>(128) : prefixArg(c.args[1], 128);
            if (!v4 || !v6) {
                log.warning(at, "'" + sample.text +
                                    "': ipmask's masks are not prefix lengths; "
                                    "keyed by the whole address");
                continue;
            }
            key["ipv4_prefix"] = *v4;
            key["ipv6_prefix"] = *v6;
        } else if (c.name == "lower" || c.name == "upper") {
            notes.push_back("the converter '" + c.name +
                            "' folds case; ratelab keys by the "
                            "value as sent");
        } else {
            notes.push_back("the converter '" + c.name +
                            "' is not carried over; keyed by the "
                            "value before it");
        }
    }
    if (address && table.type == Table::Type::Ip) {
        notes.push_back("table '" + table.name +
                        "' has type ip: HAProxy does not track IPv6 clients (they are never "
                        "limited); the import limits them too, each address on its own");
    } else if (address && table.type != Table::Type::Ipv6 && table.type != Table::Type::String &&
               table.type != Table::Type::Binary) {
        notes.push_back("table '" + table.name + "' has type " + tableTypeName(table.type) +
                        ", which does not hold an address");
    }
    for (const std::string& n : notes)
        log.warning(at, n);
    return key;
}

}  // namespace ratelab::formats::haproxy
