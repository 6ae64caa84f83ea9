// The configuration tree as zones and http/server/location levels, checked as nginx checks the
// directives of its limit_req module and the location blocks.

#include <algorithm>
#include <charconv>

#include "formats/import/nginx/nginx_model.h"

namespace ratelab::formats::nginx {

namespace {

bool isLimitDirective(std::string_view name) {
    return name == "limit_req" || name == "limit_req_zone" || name == "limit_req_status" ||
           name == "limit_req_dry_run" || name == "limit_req_log_level";
}

// ngx_atoi: a non-empty run of digits; -1 for anything else (or an overflow).
std::int64_t nginxInteger(std::string_view text) {
    if (text.empty() || text.size() > 18) return -1;
    std::int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return -1;
        value = value * 10 + (c - '0');
    }
    return value;
}

// ngx_parse_size: bytes, or k/K, m/M, g/G.
std::int64_t nginxSize(std::string_view text) {
    if (text.empty()) return -1;
    std::int64_t scale = 1;
    const char last = text.back();
    if (last == 'k' || last == 'K') scale = 1024;
    if (last == 'm' || last == 'M') scale = 1024 * 1024;
    if (last == 'g' || last == 'G') scale = 1024LL * 1024 * 1024;
    if (scale != 1) text.remove_suffix(1);
    const std::int64_t n = nginxInteger(text);
    return n < 0 || n > (std::int64_t{1} << 40) ? -1 : n * scale;
}

class ModelReader {
public:
    ModelReader(const NginxConfig& config, ImportLog& log, NginxModel& model)
        : config_(config), log_(log), model_(model) {}

    void read() {
        const std::vector<NginxDirective>& top = config_.directives;
        if (std::none_of(top.begin(), top.end(),
                         [](const NginxDirective& d) { return d.name() == "http"; })) {
            readHttpSnippet();
            return;
        }
        bool sawHttp = false;
        // Zones first: a limit_req may name a zone declared further down.
        for (const NginxDirective& d : top) {
            if (d.name() == "http" && d.block) zones(d.children);
        }
        for (const NginxDirective& d : top) {
            if (d.name() == "http" && d.block) {
                if (sawHttp) {
                    log_.error(d.at(), "\"http\" directive is duplicate");
                    continue;
                }
                sawHttp = true;
                model_.http.kind = Level::Kind::Http;
                model_.http.at = d.at();
                body(d.children, model_.http);
            } else {
                forbidLimits(d, "the main level");
            }
        }
    }

private:
    // A file without an http block holds what one would (conf.d/*.conf, sites-enabled/* and
    // ratelab's own export are included inside http { }): its top level is read as http's.
    void readHttpSnippet() {
        const std::vector<NginxDirective>& top = config_.directives;
        model_.http.kind = Level::Kind::Http;
        model_.http.at = top.empty() ? SourcePos{0, 1, 1} : top.front().at();
        if (!top.empty()) {
            log_.warning(model_.http.at,
                         "no http block: the file is read as the inside of one, as nginx reads "
                         "a file included there (conf.d/*.conf, sites-enabled/*)");
        }
        zones(top);
        body(top, model_.http);
        if (model_.http.children.empty() && !model_.http.limits.empty()) {
            // Its limits reach the servers of the file that includes it, unseen here: one
            // server without locations stands for them.
            Level server;
            server.kind = Level::Kind::Server;
            server.at = model_.http.at;
            server.serverNames = "(the including configuration's servers)";
            model_.http.children.push_back(std::move(server));
            log_.warning(model_.http.at,
                         "no server block: the limits are read as applying to every request "
                         "of the servers that include the file; a location there with "
                         "limit_req lines of its own would not inherit them");
        }
    }

    void zones(const std::vector<NginxDirective>& httpBody) {
        for (const NginxDirective& c : httpBody) {
            if (c.name() == "limit_req_zone") zone(c);
        }
    }

    // Every limit_req directive in `d` or below: not allowed there.
    void forbidLimits(const NginxDirective& d, std::string_view where) {
        if (isLimitDirective(d.name())) {
            log_.error(d.at(), "\"" + d.name() + "\" directive is not allowed here (in " +
                                   std::string(where) + ")");
        }
        for (const NginxDirective& c : d.children)
            forbidLimits(c, where);
    }

    void zone(const NginxDirective& d) {
        if (d.argumentCount() != 3) {
            log_.error(d.at(), "invalid number of arguments in \"limit_req_zone\" directive");
            return;
        }
        Zone z;
        z.at = d.at();
        z.keyText = d.words[1].text;
        bool ok = true;
        for (std::size_t i = 2; i < d.words.size(); ++i) {
            const NginxWord& w = d.words[i];
            const std::string& v = w.text;
            if (v.starts_with("zone=")) {
                const std::size_t colon = v.find(':', 5);
                if (colon == std::string::npos) {
                    log_.error(w.at, "invalid zone size \"" + v + "\"");
                    ok = false;
                    continue;
                }
                z.name = v.substr(5, colon - 5);
                const std::int64_t size = nginxSize(std::string_view(v).substr(colon + 1));
                if (size < 0) {
                    log_.error(w.at, "invalid zone size \"" + v + "\"");
                    ok = false;
                } else if (size < 8 * 4096) {
                    log_.error(w.at, "zone \"" + v + "\" is too small");
                    ok = false;
                }
            } else if (v.starts_with("rate=")) {
                std::string_view r = std::string_view(v).substr(5);
                if (r.ends_with("r/s")) {
                    r.remove_suffix(3);
                } else if (r.ends_with("r/m")) {
                    r.remove_suffix(3);
                    z.perMinute = true;
                }
                z.count = nginxInteger(r);
                if (z.count <= 0) {
                    log_.error(w.at, "invalid rate \"" + v + "\"");
                    ok = false;
                }
            } else {
                log_.error(w.at, "invalid parameter \"" + v + "\"");
                ok = false;
            }
        }
        if (z.name.empty()) {
            if (ok) log_.error(d.at(), "\"limit_req_zone\" must have \"zone\" parameter");
            return;
        }
        for (const Zone& other : model_.zones) {
            if (other.name == z.name) {
                log_.error(d.at(), "limit_req_zone \"" + z.name + "\" is already bound to key \"" +
                                       other.keyText + "\" (at " + lineRef(log_, other.at) + ")");
                return;
            }
        }
        if (!ok) return;
        z.key = zoneKey(d.words[1], config_, log_);
        model_.zones.push_back(std::move(z));
    }

    int zoneIndex(std::string_view name) const {
        for (std::size_t i = 0; i < model_.zones.size(); ++i) {
            if (model_.zones[i].name == name) return static_cast<int>(i);
        }
        return -1;
    }

    void limitReq(const NginxDirective& d, Level& level) {
        if (d.argumentCount() < 1 || d.argumentCount() > 3) {
            log_.error(d.at(), "invalid number of arguments in \"limit_req\" directive");
            return;
        }
        LimitReq l;
        l.at = d.at();
        std::string zoneName;
        bool ok = true, named = false;
        for (std::size_t i = 1; i < d.words.size(); ++i) {
            const NginxWord& w = d.words[i];
            const std::string& v = w.text;
            if (v.starts_with("zone=")) {
                zoneName = v.substr(5);
                named = true;
            } else if (v.starts_with("burst=")) {
                l.burst = nginxInteger(std::string_view(v).substr(6));
                if (l.burst <= 0) {
                    log_.error(w.at, "invalid burst value \"" + v + "\"");
                    ok = false;
                }
            } else if (v.starts_with("delay=")) {
                l.delay = nginxInteger(std::string_view(v).substr(6));
                l.nodelay = false;
                if (l.delay <= 0) {
                    log_.error(w.at, "invalid delay value \"" + v + "\"");
                    ok = false;
                }
            } else if (v == "nodelay") {
                l.nodelay = true;
                l.delay = 0;
            } else {
                log_.error(w.at, "invalid parameter \"" + v + "\"");
                ok = false;
            }
        }
        if (!named) {
            if (ok) log_.error(d.at(), "\"limit_req\" must have \"zone\" parameter");
            return;
        }
        if (!ok) return;
        l.zone = zoneIndex(zoneName);
        if (l.zone < 0) {
            // nginx finds out only when it starts: "zero size shared memory zone".
            log_.error(d.words[1].at, "limit_req names the zone \"" + zoneName +
                                          "\", which no limit_req_zone declares");
            return;
        }
        for (const LimitReq& other : level.limits) {
            if (other.zone == l.zone) {
                log_.error(d.at(), "\"limit_req\" directive is duplicate (zone \"" + zoneName +
                                       "\" at " + lineRef(log_, other.at) + ")");
                return;
            }
        }
        model_.zones[l.zone].used = true;
        level.limits.push_back(l);
    }

    void status(const NginxDirective& d, Level& level) {
        if (d.argumentCount() != 1) {
            log_.error(d.at(), "invalid number of arguments in \"limit_req_status\" directive");
            return;
        }
        if (level.status.set) {
            log_.error(d.at(), "\"limit_req_status\" directive is duplicate");
            return;
        }
        const std::int64_t code = nginxInteger(d.words[1].text);
        if (code < 0) {
            log_.error(d.words[1].at, "invalid number \"" + d.words[1].text + "\"");
            return;
        }
        if (code < 400 || code > 599) {
            log_.error(d.words[1].at, "value must be between 400 and 599");
            return;
        }
        level.status = Setting<int>{static_cast<int>(code), d.at(), true};
    }

    void dryRun(const NginxDirective& d, Level& level) {
        if (d.argumentCount() != 1) {
            log_.error(d.at(), "invalid number of arguments in \"limit_req_dry_run\" directive");
            return;
        }
        if (level.dryRun.set) {
            log_.error(d.at(), "\"limit_req_dry_run\" directive is duplicate");
            return;
        }
        const std::string& v = d.words[1].text;
        if (v != "on" && v != "off") {
            log_.error(d.words[1].at, "invalid value \"" + v +
                                          "\" in \"limit_req_dry_run\" directive, it must be "
                                          "\"on\" or \"off\"");
            return;
        }
        level.dryRun = Setting<bool>{v == "on", d.at(), true};
    }

    void logLevel(const NginxDirective& d) {
        if (d.argumentCount() != 1) {
            log_.error(d.at(), "invalid number of arguments in \"limit_req_log_level\" directive");
            return;
        }
        const std::string& v = d.words[1].text;
        if (v != "info" && v != "notice" && v != "warn" && v != "error")
            log_.error(d.words[1].at, "invalid value \"" + v + "\"");
    }

    // The directives of an http, server or location block.
    void body(const std::vector<NginxDirective>& directives, Level& level) {
        for (const NginxDirective& d : directives) {
            const std::string& n = d.name();
            if (n == "limit_req_zone") {
                if (level.kind != Level::Kind::Http)
                    log_.error(d.at(), "\"limit_req_zone\" directive is not allowed here");
            } else if (n == "limit_req") {
                limitReq(d, level);
            } else if (n == "limit_req_status") {
                status(d, level);
            } else if (n == "limit_req_dry_run") {
                dryRun(d, level);
            } else if (n == "limit_req_log_level") {
                logLevel(d);
            } else if (n == "server" && !d.block && level.kind == Level::Kind::Http) {
                log_.error(d.at(), "directive \"server\" has no opening \"{\"");
            } else if (n == "server" && d.block && level.kind == Level::Kind::Http) {
                Level server;
                server.kind = Level::Kind::Server;
                server.at = d.at();
                for (const NginxDirective& c : d.children) {
                    if (c.name() != "server_name") continue;
                    for (std::size_t i = 1; i < c.words.size(); ++i)
                        server.serverNames +=
                            (server.serverNames.empty() ? "" : " ") + c.words[i].text;
                }
                body(d.children, server);
                level.children.push_back(std::move(server));
            } else if (n == "location" && d.block && level.kind != Level::Kind::Http) {
                location(d, level);
            } else if (n == "return" && level.kind != Level::Kind::Http) {
                level.answersFirst = true;
                level.answersAt = d.at();
            } else if (n == "set_real_ip_from" && level.kind == Level::Kind::Http) {
                if (d.argumentCount() == 1) {
                    model_.realIpFrom.push_back(d.words[1].text);
                    if (model_.realIpAt.line == 0) model_.realIpAt = d.at();
                }
            } else if (n == "real_ip_header" && level.kind == Level::Kind::Http) {
                if (d.argumentCount() == 1) {
                    model_.realIpHeader = d.words[1].text;
                    model_.realIpHeaderAt = d.at();
                }
            } else if (d.block) {
                // if, limit_except, upstream, map, ...: no limit_req inside.
                forbidLimits(d, "\"" + n + "\"");
            }
        }
    }

    void location(const NginxDirective& d, Level& parent) {
        Level loc;
        loc.kind = Level::Kind::Location;
        loc.at = d.at();
        if (d.argumentCount() == 2) {
            const std::string& mod = d.words[1].text;
            loc.uri = d.words[2].text;
            loc.uriAt = d.words[2].at;
            if (mod == "=") {
                loc.match = LocationMatch::Exact;
            } else if (mod == "^~") {
                loc.match = LocationMatch::PrefixNoRegex;
            } else if (mod == "~") {
                loc.match = LocationMatch::Regex;
            } else if (mod == "~*") {
                loc.match = LocationMatch::RegexCaseless;
            } else {
                log_.error(d.words[1].at, "invalid location modifier \"" + mod + "\"");
                return;
            }
        } else if (d.argumentCount() == 1) {
            std::string name = d.words[1].text;
            loc.uriAt = d.words[1].at;
            if (name.starts_with("=")) {
                loc.match = LocationMatch::Exact;
                name.erase(0, 1);
            } else if (name.starts_with("~*")) {
                loc.match = LocationMatch::RegexCaseless;
                name.erase(0, 2);
            } else if (name.starts_with("~")) {
                loc.match = LocationMatch::Regex;
                name.erase(0, 1);
            } else if (name.starts_with("@")) {
                loc.match = LocationMatch::Named;
            } else {
                loc.match = LocationMatch::Prefix;
            }
            loc.uri = name;
        } else {
            log_.error(d.at(), "invalid number of arguments in \"location\" directive");
            return;
        }
        // ngx_http_core_location's checks of a nested location.
        if (parent.kind == Level::Kind::Location) {
            const std::string quoted = "\"" + loc.uri + "\"";
            if (parent.match == LocationMatch::Exact) {
                log_.error(d.at(), "location " + quoted +
                                       " cannot be inside the exact location \"" + parent.uri +
                                       "\"");
                return;
            }
            if (parent.match == LocationMatch::Named) {
                log_.error(d.at(), "location " + quoted +
                                       " cannot be inside the named location \"" + parent.uri +
                                       "\"");
                return;
            }
            if (loc.match == LocationMatch::Named) {
                log_.error(d.at(), "named location " + quoted + " can be on the server level only");
                return;
            }
            const bool prefixLike = loc.match == LocationMatch::Prefix ||
                                    loc.match == LocationMatch::PrefixNoRegex ||
                                    loc.match == LocationMatch::Exact;
            const bool parentRegex = parent.match == LocationMatch::Regex ||
                                     parent.match == LocationMatch::RegexCaseless;
            if (prefixLike && (parentRegex || !loc.uri.starts_with(parent.uri))) {
                log_.error(d.at(),
                           "location " + quoted + " is outside location \"" + parent.uri + "\"");
                return;
            }
        }
        for (const Level& sibling : parent.children) {
            const bool sameKind =
                (sibling.match == LocationMatch::Exact) == (loc.match == LocationMatch::Exact);
            const bool bothPrefix = sibling.match != LocationMatch::Regex &&
                                    sibling.match != LocationMatch::RegexCaseless &&
                                    loc.match != LocationMatch::Regex &&
                                    loc.match != LocationMatch::RegexCaseless;
            if (sibling.uri == loc.uri && sameKind && bothPrefix) {
                log_.error(d.at(), "duplicate location \"" + loc.uri + "\"");
                return;
            }
        }
        body(d.children, loc);
        parent.children.push_back(std::move(loc));
    }

    const NginxConfig& config_;
    ImportLog& log_;
    NginxModel& model_;
};

}  // namespace

NginxModel readNginxModel(const NginxConfig& config, ImportLog& log) {
    NginxModel model;
    ModelReader(config, log, model).read();
    return model;
}

}  // namespace ratelab::formats::nginx
