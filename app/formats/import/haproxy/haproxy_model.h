#pragma once

// What the HAProxy import reads out of the sections: stick tables, the ACLs and rules of each
// proxy in the order HAProxy runs them, and conditions as OR-ed lists of AND-ed terms.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/import/haproxy/haproxy_config.h"
#include "formats/import/import_common.h"

namespace ratelab::formats::haproxy {

/// stick-table type ... size ... [expire ...] [store ...].
struct Table {
    std::string name;  ///< the proxy's name, or PEERS/NAME for a peers section's table
    SourcePos at;
    enum class Type { Ip, Ipv6, Integer, String, Binary } type = Type::Ip;
    std::int64_t length = 32;  ///< string and binary keys: bytes kept (a string's 32 hold 31)
    bool lengthSet = false;
    std::int64_t size = 0;
    std::optional<std::int64_t> expireMs;
    /// Stored data types: name -> period in ms (0 for counters without one).
    std::map<std::string, std::int64_t> stores;
    SourcePos storeAt;
};

/// A fetch with its arguments and converters: "sc_http_req_rate(0)", "src,ipmask(24)".
struct Sample {
    std::string fetch;              ///< "sc_http_req_rate", "src", "req.hdr"
    std::vector<std::string> args;  ///< the fetch's own arguments
    struct Converter {
        std::string name;
        std::vector<std::string> args;
    };
    std::vector<Converter> converters;
    std::string text;  ///< as written
};

/// Reads "name(arg,arg),conv(arg)...": false when the parentheses do not balance.
bool parseSample(const std::string& text, Sample& out);

/// One term of a condition: an ACL (named or anonymous) with its sample, flags, operator and
/// values, possibly negated.
struct Term {
    bool negated = false;
    Sample sample;
    std::vector<std::string> flags;   ///< -i, -m int, ...
    std::string matchMethod;          ///< the -m argument, if any
    std::string op;                   ///< gt, ge, lt, le, eq, or empty
    std::vector<std::string> values;  ///< patterns or numbers
    std::string name;                 ///< a named ACL's name; empty for an anonymous one
    SourcePos at;
};

/// An OR of ANDs.
using Condition = std::vector<std::vector<Term>>;

enum class RuleKind { Track, Deny, SetSrc, Other };

struct Rule {
    RuleKind kind = RuleKind::Other;
    std::string action;  ///< "track-sc0", "deny", "tarpit", "reject", "return", ...
    SourcePos at;
    int order = 0;     ///< HAProxy's execution order across every proxy a request passes
    bool tcp = false;  ///< a tcp-request rule (runs before every http-request rule)
    // Track:
    int slot = -1;
    Sample key;
    SourcePos keyAt;
    std::string table;  ///< the table named, or the proxy's own
    SourcePos tableAt;
    // Deny:
    int status = 403;
    bool statusSet = false;
    // Every rule:
    bool conditional = false;
    Condition condition;  ///< when conditional: the request must match it
};

struct Proxy {
    std::string kind;  ///< frontend, backend, listen
    std::string name;
    SourcePos at;
    std::vector<Rule> rules;  ///< tcp-request first, then http-request, each in file order
};

struct HaproxyModel {
    std::vector<Table> tables;
    std::vector<Proxy> proxies;
    const Table* table(const std::string& name) const;
};

/// Tables, ACLs and rules, checked as HAProxy checks them; problems go to `log`.
HaproxyModel readHaproxyModel(const HaproxyConfig& config, ImportLog& log);

/// HAProxy's time format: a number with an optional unit (us, ms, s, m, h, d; `defaultUnitMs`
/// ms per unit without one). Nullopt when it is not one.
std::optional<std::int64_t> haproxyTimeMs(std::string_view text, std::int64_t defaultUnitMs = 1);

}  // namespace ratelab::formats::haproxy
