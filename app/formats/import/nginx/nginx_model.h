#pragma once

// What the nginx import reads out of the configuration tree before it writes policies: the
// limit_req zones with their keys, and the http, server and location levels with the
// limit_req lines and settings written at each (nginx's own merge rules are applied later,
// in nginx_import.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/import/import_common.h"
#include "formats/import/nginx/nginx_config.h"

namespace ratelab::formats::nginx {

/// A zone's key as a ratelab key.
struct ZoneKey {
    PolicyJson key;                        ///< the policy's "key" object
    std::vector<std::string> bypassCidrs;  ///< clients whose key is empty (a geo + map list)
    std::string signature;                 ///< equal for keys that partition requests alike
    std::string description;               ///< "the client address", "the header X-Key", ...
    bool shared = false;                   ///< every request in one bucket (a constant key)
};

/// limit_req_zone KEY zone=NAME:SIZE rate=RATE.
struct Zone {
    std::string name;
    SourcePos at;
    std::string keyText;     ///< as written, for messages
    std::int64_t count = 1;  ///< N of "N r/s" or "N r/m"
    bool perMinute = false;
    std::optional<ZoneKey> key;  ///< unset: the key cannot be carried over (warned)
    bool used = false;
};

/// limit_req zone=NAME [burst=B] [nodelay | delay=D].
struct LimitReq {
    int zone = -1;  ///< index into NginxModel::zones
    std::int64_t burst = 0;
    std::int64_t delay = 0;  ///< 0: every excess request is delayed
    bool nodelay = false;
    SourcePos at;
};

template <typename T>
struct Setting {
    T value{};
    SourcePos at;
    bool set = false;
};

enum class LocationMatch { None, Prefix, PrefixNoRegex, Exact, Regex, RegexCaseless, Named };

/// An http, server or location block, with what is written at that level.
struct Level {
    enum class Kind { Http, Server, Location } kind = Kind::Http;
    SourcePos at;
    std::vector<LimitReq> limits;  ///< its own limit_req lines, in order
    Setting<int> status;           ///< limit_req_status
    Setting<bool> dryRun;          ///< limit_req_dry_run
    /// An unconditional `return` (or a redirecting rewrite) at this level: nginx answers before
    /// limit_req runs, so no request of the level is limited.
    bool answersFirst = false;
    SourcePos answersAt;
    // Locations:
    LocationMatch match = LocationMatch::None;
    std::string uri;
    SourcePos uriAt;
    // Servers: their names, for messages.
    std::string serverNames;
    std::vector<Level> children;  ///< servers of http, locations of servers and locations
};

struct NginxModel {
    std::vector<Zone> zones;
    Level http;
    /// set_real_ip_from / real_ip_header at the http level (the realip module), for
    /// trusted_proxies.
    std::vector<std::string> realIpFrom;
    SourcePos realIpAt;
    std::string realIpHeader;
    SourcePos realIpHeaderAt;
};

/// Zones, levels and their settings, checked as nginx checks them (contexts, arguments, a
/// limit_req naming a zone no limit_req_zone declares); problems go to `log`.
NginxModel readNginxModel(const NginxConfig& config, ImportLog& log);

/// A zone key (a complex value: text and $variables) as a ratelab key; nullopt, with a warning,
/// when no ratelab key says it. `definitions` is the configuration, for the variables that
/// `map`, `geo` and `set` define.
std::optional<ZoneKey> zoneKey(const NginxWord& key, const NginxConfig& config, ImportLog& log);

}  // namespace ratelab::formats::nginx
