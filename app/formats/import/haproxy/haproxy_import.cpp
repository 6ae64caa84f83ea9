// HAProxy's deny rules on stick-table counters, with the track-sc rules that count for them, as
// policies in rule order.

#include "formats/import/haproxy/haproxy_import.h"

#include <algorithm>
#include <map>

#include "formats/import/path_regex.h"
#include "policy/policy_names.h"
#include "ratelab/ip_address.h"

namespace ratelab::formats::haproxy {

namespace {

constexpr int kRatelabStatus = 429;

// A counter compared in a condition: sc_http_req_rate(0) gt 10, src_http_req_rate(t) ge 5, ...
struct RateTerm {
    bool slotForm = true;  // sc*: the entry tracked in a slot; src_*: src in a table
    int slot = 0;
    std::string table;       // the table named in the fetch, if any
    std::string counter;     // http_req_rate, conn_rate, http_req_cnt, conn_cnt
    std::int64_t limit = 0;  // requests allowed: the counter may reach this
    SourcePos at;
    std::string text;
};

// One AND-ed list of terms, read as what a policy can say.
struct Reading {
    std::vector<RateTerm> rates;
    std::vector<PolicyJson> routes;  // OR-ed; empty: every path
    bool routed = false;
    std::vector<std::string> methods;  // empty: every method
    std::vector<std::string> bypass;   // clients never limited
    bool never = false;                // a FALSE term
};

bool counterName(std::string_view name) {
    return name == "http_req_rate" || name == "conn_rate" || name == "http_req_cnt" ||
           name == "conn_cnt";
}

std::string upper(std::string s) {
    for (char& c : s)
        c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
    return s;
}

// The routes both lists match, where a route can say that: a prefix inside another prefix, an
// exact path under a prefix, equal routes. `approximate` when a pair is neither.
std::vector<PolicyJson> intersection(const std::vector<PolicyJson>& a,
                                     const std::vector<PolicyJson>& b, bool& approximate) {
    std::vector<PolicyJson> out;
    auto within = [](const PolicyJson& route, const std::string& prefix) {
        RouteMatch m;
        m.pathPrefix = prefix;
        return m.matches("GET", samplePath(route));
    };
    for (const PolicyJson& x : a) {
        for (const PolicyJson& y : b) {
            if (x == y) {
                out.push_back(x);
            } else if (y.contains("path_prefix") && within(x, y["path_prefix"])) {
                out.push_back(x);
            } else if (x.contains("path_prefix") && within(y, x["path_prefix"])) {
                out.push_back(y);
            } else if (x.contains("path_pattern") && y.contains("path_pattern")) {
                approximate = true;
            }
        }
    }
    return out;
}

std::string routeList(const std::vector<PolicyJson>& routes) {
    std::string out;
    for (const PolicyJson& r : routes)
        out += (out.empty() ? "" : ", ") + routeText(r);
    return out;
}

class Mapper {
public:
    Mapper(const HaproxyModel& model, ImportLog& log) : model_(model), log_(log) {}

    std::optional<PolicyJson> map() {
        if (model_.tables.empty()) {
            if (log_.hasErrors()) return std::nullopt;
            log_.error(SourcePos{0, 0, 0}, "no rate limit: the configuration has no stick-table");
            return std::nullopt;
        }
        std::vector<std::pair<const Proxy*, const Rule*>> denies;
        for (const Proxy& p : model_.proxies) {
            for (const Rule& r : p.rules) {
                if (r.kind == RuleKind::Deny) denies.emplace_back(&p, &r);
                if (r.kind == RuleKind::SetSrc)
                    log_.warning(r.at,
                                 "set-src replaces the client address HAProxy keys by; "
                                 "ratelab keys by the address it sees (its "
                                 "trusted_proxies can read one from a header)");
            }
        }
        std::stable_sort(denies.begin(), denies.end(), [](const auto& a, const auto& b) {
            return a.second->order < b.second->order;
        });
        PolicyJson policies = PolicyJson::array();
        for (const auto& [proxy, rule] : denies)
            denyRule(*proxy, *rule, policies);
        if (log_.hasErrors()) return std::nullopt;
        warnCrossCounting();
        warnProxies();
        if (policies.empty()) {
            if (log_.hasErrors()) return std::nullopt;
            log_.error(SourcePos{0, 0, 0},
                       "no rate limit: no deny, tarpit or reject rule compares a stick-table "
                       "counter that a track-sc rule counts");
            return std::nullopt;
        }
        return PolicyJson{{"version", 1}, {"policies", std::move(policies)}};
    }

private:
    // A term of a condition, into `out`; false when the term is written wrong.
    bool readTerm(const Term& t, Reading& out, bool forDeny) {
        const std::string& f = t.sample.fetch;
        // Counters: sc_X(N[,T]), scN_X([T]), src_X([T]).
        std::string counter;
        RateTerm rate;
        if (f.starts_with("sc_")) {
            counter = f.substr(3);
            rate.slotForm = true;
            if (t.sample.args.empty() || t.sample.args[0].size() != 1 ||
                t.sample.args[0][0] < '0' || t.sample.args[0][0] > '2') {
                if (counterName(counter)) {
                    log_.error(t.at, "'" + t.sample.text +
                                         "': the counter number must be 0, 1 "
                                         "or 2");
                    return false;
                }
            } else {
                rate.slot = t.sample.args[0][0] - '0';
            }
            if (t.sample.args.size() > 1) rate.table = t.sample.args[1];
        } else if (f.size() > 4 && f.starts_with("sc") && f[2] >= '0' && f[2] <= '2' &&
                   f[3] == '_') {
            counter = f.substr(4);
            rate.slot = f[2] - '0';
            if (!t.sample.args.empty()) rate.table = t.sample.args[0];
        } else if (f.starts_with("src_")) {
            counter = f.substr(4);
            rate.slotForm = false;
            if (!t.sample.args.empty()) rate.table = t.sample.args[0];
        }
        if (counterName(counter)) {
            if (!forDeny) {
                log_.warning(t.at, "a track-sc rule conditioned on a counter ('" + t.sample.text +
                                       "') is imported without the condition");
                return true;
            }
            rate.counter = counter;
            rate.at = t.at;
            rate.text = t.sample.text;
            // gt X / ge X / "X:" : the counter may reach X (gt) or X - 1 (ge).
            std::string value;
            bool greaterEqual = false;
            if ((t.op == "gt" || t.op == "ge") && t.values.size() == 1) {
                value = t.values[0];
                greaterEqual = t.op == "ge";
            } else if (t.op.empty() && t.values.size() == 1 && t.values[0].ends_with(":")) {
                value = t.values[0].substr(0, t.values[0].size() - 1);
                greaterEqual = true;
            } else {
                log_.warning(t.at, "'" + t.sample.text + " " + t.op +
                                       "...' is not a rate limit ratelab can say (only gt X, "
                                       "ge X or X:); not imported");
                out.never = true;
                return true;
            }
            if (value.empty() || value.size() > 12 ||
                !std::all_of(value.begin(), value.end(),
                             [](char c) { return c >= '0' && c <= '9'; })) {
                log_.error(t.at, "'" + t.sample.text + "' is compared with '" + value +
                                     "', which is not an integer");
                return false;
            }
            rate.limit = std::stoll(value) - (greaterEqual ? 1 : 0);
            if (t.negated) {
                log_.warning(t.at, "a negated counter ('!" + t.sample.text +
                                       "') limits nothing ratelab can say; not imported");
                out.never = true;
                return true;
            }
            out.rates.push_back(rate);
            return true;
        }
        const bool caseless = std::find(t.flags.begin(), t.flags.end(), "-i") != t.flags.end();
        std::string match = t.matchMethod;
        std::string fetch = f;
        if (fetch == "path_beg" || fetch == "path_reg" || fetch == "path_end" ||
            fetch == "path_sub" || fetch == "path_dir" || fetch == "url_beg") {
            match = fetch.substr(fetch.find('_') + 1);
            fetch = fetch.substr(0, fetch.find('_'));
        }
        if (fetch == "path" || fetch == "url") {
            if (t.negated) return dropped(t, "a negated path");
            if (match.empty() || match == "str") match = "exact";
            std::vector<PolicyJson> routes;
            for (const std::string& v : t.values) {
                if (match == "beg" || match == "dir") {
                    if (!policy::isValidRoutePath(v))
                        return dropped(t, "the path \"" + v + "\", which no route can hold");
                    std::string approximation;
                    routes.push_back(prefixRoute(v, approximation));
                    if (match == "dir" || !approximation.empty())
                        log_.warning(t.at, match == "dir"
                                               ? "path_dir \"" + v +
                                                     "\" matches the segment anywhere; ratelab's "
                                                     "route takes it as a prefix"
                                               : "path_beg " + approximation);
                } else if (match == "exact") {
                    std::optional<PolicyJson> exact = exactRoute(v);
                    if (!exact) return dropped(t, "the exact path \"" + v + "\"");
                    routes.push_back(*exact);
                } else if (match == "reg") {
                    std::string why;
                    std::optional<RegexRoutes> r = routesFromRegex(v, caseless, why);
                    if (!r) return dropped(t, "path_reg \"" + v + "\" (" + why + ")");
                    for (const std::string& a : r->approximations)
                        log_.warning(t.at, "path_reg \"" + v + "\": " + a);
                    routes.insert(routes.end(), r->matches.begin(), r->matches.end());
                } else {
                    return dropped(t, "path_" + match);
                }
            }
            if (caseless && match != "reg")
                log_.warning(t.at,
                             "-i ignores case in paths; ratelab's routes compare them "
                             "case by case");
            if (fetch == "url")
                log_.warning(t.at,
                             "url matches the query string too; ratelab's routes match "
                             "the path");
            if (out.routed && !out.routes.empty()) {
                log_.warning(t.at,
                             "several path conditions in one rule: the import keeps the "
                             "last");
            }
            out.routes = std::move(routes);
            out.routed = true;
            return true;
        }
        if (fetch == "method") {
            if (t.negated) return dropped(t, "a negated method");
            for (const std::string& v : t.values)
                out.methods.push_back(upper(v));
            return true;
        }
        if (fetch == "src") {
            if (!t.negated) return dropped(t, "a condition that only some clients meet");
            for (const std::string& v : t.values) {
                const std::optional<Cidr> cidr = Cidr::parse(v);
                if (!cidr) return dropped(t, "\"" + v + "\", which is not an address or a CIDR");
                out.bypass.push_back(cidr->toString());  // the network, host bits cleared
            }
            return true;
        }
        if (fetch == "always_true") {
            if (t.negated) out.never = true;
            return true;
        }
        if (fetch == "always_false") {
            if (!t.negated) out.never = true;
            return true;
        }
        return dropped(t, "'" + t.sample.text + "'");
    }

    bool dropped(const Term& t, const std::string& what) {
        log_.warning(t.at, what + (t.name.empty() ? "" : " (ACL " + t.name + ")") +
                               ": no ratelab route says it; the import leaves it out of the "
                               "condition, so the policy applies to more requests");
        return true;
    }

    std::vector<Reading> readCondition(const Rule& r, bool forDeny) {
        std::vector<Reading> out;
        if (!r.conditional) return {Reading{}};
        for (const std::vector<Term>& conjunct : r.condition) {
            Reading reading;
            bool ok = true;
            for (const Term& t : conjunct)
                ok = readTerm(t, reading, forDeny) && ok;
            if (!ok) return {};
            if (!reading.never) out.push_back(std::move(reading));
        }
        return out;
    }

    // The track rules that count the counter `rate` of a deny at `deny`.
    std::vector<const Rule*> countersOf(const Proxy& proxy, const Rule& deny, const RateTerm& rate,
                                        bool& error) {
        std::vector<const Rule*> out;
        error = false;
        if (rate.slotForm) {
            bool later = false;
            for (const Proxy& p : model_.proxies) {
                // A request passes a frontend's rules, then its backend's: a slot a backend
                // tracks is tracked after every frontend rule.
                const bool before =
                    &p == &proxy || (proxy.kind == "backend" && p.kind != "backend");
                const bool after = proxy.kind != "backend" && p.kind == "backend";
                if (!before && !after) continue;
                for (const Rule& r : p.rules) {
                    if (r.kind != RuleKind::Track || r.slot != rate.slot) continue;
                    if (before && r.order < deny.order) {
                        out.push_back(&r);
                    } else {
                        later = true;
                    }
                }
            }
            if (out.empty()) {
                if (later) {
                    log_.warning(rate.at, "'" + rate.text + "' reads counter " +
                                              std::to_string(rate.slot) +
                                              ", which is tracked only by rules after this one: "
                                              "it has no value here and the rule never denies; "
                                              "not imported");
                } else {
                    log_.error(rate.at, "'" + rate.text + "' reads counter " +
                                            std::to_string(rate.slot) + ", which no track-sc" +
                                            std::to_string(rate.slot) + " rule tracks");
                    error = true;
                }
            }
            return out;
        }
        const std::string table = rate.table.empty() ? proxy.name : rate.table;
        if (!model_.table(table)) {
            log_.error(rate.at, "'" + rate.text + "': unable to find table '" + table + "'");
            error = true;
            return out;
        }
        for (const Proxy& p : model_.proxies) {
            for (const Rule& r : p.rules) {
                if (r.kind == RuleKind::Track && r.table == table && r.key.fetch == "src" &&
                    r.key.converters.empty())
                    out.push_back(&r);
            }
        }
        if (out.empty()) {
            log_.error(rate.at, "'" + rate.text + "' reads table '" + table +
                                    "', into which no track-sc rule counts src");
            error = true;
        }
        return out;
    }

    void denyRule(const Proxy& proxy, const Rule& deny, PolicyJson& policies) {
        for (const Reading& d : readCondition(deny, true)) {
            if (d.rates.empty()) continue;  // access control, not a rate limit
            if (d.rates.size() > 1) {
                log_.warning(d.rates[1].at,
                             "the rule denies only when every one of its "
                             "counters is over its limit; no ratelab policy says "
                             "that: not imported");
                continue;
            }
            const RateTerm& rate = d.rates.front();
            bool error = false;
            const std::vector<const Rule*> trackers = countersOf(proxy, deny, rate, error);
            if (trackers.size() > 1 && rate.slotForm)
                log_.warning(rate.at, "counter " + std::to_string(rate.slot) + " is tracked by " +
                                          std::to_string(trackers.size()) +
                                          " rules (the first that runs wins): one policy each");
            for (const Rule* tracker : trackers)
                policyFor(proxy, deny, d, rate, *tracker, policies);
        }
    }

    void policyFor(const Proxy& proxy, const Rule& deny, const Reading& d, const RateTerm& rate,
                   const Rule& tracker, PolicyJson& policies) {
        const Table* table = model_.table(tracker.table);
        if (!table) return;  // reported with the rule
        if (rate.slotForm && !rate.table.empty() && rate.table != table->name) {
            log_.warning(rate.at, "'" + rate.text + "' looks the tracked key up in table '" +
                                      rate.table + "' instead of '" + table->name +
                                      "'; not imported");
            return;
        }
        const Table* counted =
            rate.slotForm ? table : model_.table(rate.table.empty() ? proxy.name : rate.table);
        auto stored = counted->stores.find(rate.counter);
        if (stored == counted->stores.end()) {
            log_.error(rate.at, "'" + rate.text + "': table '" + counted->name +
                                    "' does not store " + rate.counter + " (at " +
                                    lineRef(log_, counted->at) + ")");
            return;
        }
        std::optional<PolicyJson> key = trackedKey(tracker.key, tracker.keyAt, *table, log_);
        if (!key) return;
        std::vector<Reading> counting = readCondition(tracker, false);
        for (const Reading& t : counting) {
            // Which requests are counted (the tracker's condition) and which denied (the
            // deny's): a policy counts and limits the same requests. Reading a slot, the deny
            // sees only requests the tracker tracked; reading src in a table, it sees the count
            // whatever path counted it.
            std::vector<PolicyJson> routes;
            bool approximate = false;
            if (!t.routed || !d.routed) {
                routes = t.routed ? t.routes : d.routes;
                approximate = d.routed || (!rate.slotForm && t.routed);
            } else {
                routes = intersection(t.routes, d.routes, approximate);
                if (!rate.slotForm && routes != d.routes) approximate = true;
                if (routes.empty() && !approximate) continue;  // never both: never denies
            }
            if (approximate)
                log_.warning(deny.at, "HAProxy counts the requests tracked at " +
                                          lineRef(log_, tracker.at) +
                                          " and reads the count on the requests this rule's "
                                          "paths match; the policy counts and limits " +
                                          (routes.empty() ? std::string("every request")
                                                          : "the paths " + routeList(routes)) +
                                          " only");
            std::vector<std::string> methods = t.methods;
            if (methods.empty()) {
                methods = d.methods;
            } else if (!d.methods.empty()) {
                std::vector<std::string> both;
                for (const std::string& m : d.methods) {
                    if (std::find(methods.begin(), methods.end(), m) != methods.end())
                        both.push_back(m);
                }
                if (both.empty()) continue;
                methods = both;
            }
            std::vector<std::string> bypass = d.bypass;
            for (const std::string& cidr : t.bypass) {
                if (std::find(bypass.begin(), bypass.end(), cidr) == bypass.end())
                    bypass.push_back(cidr);
            }
            if (routes.empty()) routes.push_back(PolicyJson{{"path_prefix", "/"}});
            for (const PolicyJson& route : routes) {
                PolicyJson match = route;
                if (!methods.empty()) match["methods"] = methods;
                const std::string slug = routeSlug(route);
                std::string name = table->name;
                if (!slug.empty()) name += "." + slug;
                if (rate.counter != "http_req_rate") name += "." + rate.counter;
                PolicyJson policy{{"name", names_.unique(name)}, {"match", match}};
                limitFields(policy, *table, rate, stored->second, tracker.order < deny.order);
                policy["key"] = *key;
                policy["budget"] = PolicyJson{{"enabled", false}};
                policy["mode"] = "enforce";
                policy["headers"] = "none";
                if (!bypass.empty()) policy["bypass"] = PolicyJson{{"cidrs", bypass}};
                policies.push_back(std::move(policy));
                imported_.push_back(Imported{&deny, &tracker, &proxy});
            }
        }
        warnStatus(deny);
    }

    void warnThresholdZero(const RateTerm& rate) {
        log_.warning(rate.at,
                     "a threshold of 0 refuses every request the counter has counted; "
                     "ratelab's limits hold at least one request a window, so the "
                     "import lets the first through");
    }

    void limitFields(PolicyJson& policy, const Table& table, const RateTerm& rate,
                     std::int64_t period, bool countRefused) {
        if (rate.counter == "http_req_rate" || rate.counter == "conn_rate") {
            policy["algorithm"] = "haproxy_rate";
            policy["window_ms"] = period;
            policy["capacity"] = rate.limit;
            // Counted before the deny, `gt 0` refuses every request, and read first `ge 0`
            // does; a policy must let one through. Read first, `gt 0` admits a request while
            // the entry reads 0, exactly.
            const std::int64_t least = countRefused ? 1 : 0;
            if (rate.limit < least) {
                warnThresholdZero(rate);
                policy["capacity"] = least;
            }
            policy["count_refused"] = countRefused;
            if (table.expireMs) policy["expire_ms"] = *table.expireMs;
            if (rate.counter == "conn_rate")
                log_.warning(rate.at,
                             "conn_rate counts connections (one per request under "
                             "http-request tracking); ratelab counts requests");
            return;
        }
        // A counter that only grows: HAProxy resets it when the entry expires, `expire` after
        // its last use. A fixed window of that length is the nearest ratelab limit.
        const std::int64_t window = table.expireMs.value_or(86'400'000LL * 90);
        policy["algorithm"] = "fixed_window";
        policy["window_ms"] = std::max<std::int64_t>(1, window);
        policy["capacity"] = std::max<std::int64_t>(1, rate.limit);
        if (rate.limit < 1) warnThresholdZero(rate);
        log_.warning(rate.at,
                     rate.counter + " only grows until the entry expires (" +
                         (table.expireMs ? std::to_string(*table.expireMs) + " ms after its "
                                                                             "last use"
                                         : std::string("never: the table has no expire")) +
                         "); the import uses a fixed window of " + std::to_string(window) +
                         " ms from the key's first request");
    }

    void warnStatus(const Rule& deny) {
        if (warnedStatus_.count(&deny)) return;
        warnedStatus_[&deny] = 1;
        if (deny.action == "tarpit") {
            log_.warning(deny.at,
                         "tarpit holds a denied request for 'timeout tarpit', then "
                         "answers " +
                             std::to_string(deny.status) + "; ratelab refuses at once with 429");
        } else if (deny.action == "reject" || deny.action == "silent-drop") {
            log_.warning(deny.at, deny.action +
                                      " closes the connection; ratelab refuses with "
                                      "429");
        } else if (deny.status != kRatelabStatus) {
            log_.warning(deny.at, "HAProxy answers a denied request with " +
                                      std::to_string(deny.status) +
                                      (deny.statusSet ? "" : " (the default)") +
                                      "; ratelab refuses with 429 (the decisions are the same)");
        }
    }

    // HAProxy counts at track time: a counter tracked before an earlier policy's deny counts
    // the requests that deny refuses; ratelab's walk stops at the first refusal.
    void warnCrossCounting() {
        for (std::size_t j = 1; j < imported_.size(); ++j) {
            for (std::size_t i = 0; i < j; ++i) {
                if (imported_[i].deny == imported_[j].deny) continue;
                if (imported_[j].tracker->order < imported_[i].deny->order) {
                    log_.warning(imported_[j].tracker->at,
                                 "this counter counts every request before the deny at " +
                                     lineRef(log_, imported_[i].deny->at) +
                                     " runs; ratelab does not charge its policy for requests an "
                                     "earlier policy refused");
                    break;
                }
            }
        }
    }

    void warnProxies() {
        const Proxy* first = nullptr;
        std::map<const Proxy*, int> warned;
        for (const Imported& im : imported_) {
            const Proxy* p = im.proxy;
            if (p->kind == "backend" && !warned.count(p)) {
                warned[p] = 1;
                log_.warning(p->at, "the rules of backend " + p->name +
                                        " apply to the requests HAProxy sends to it; ratelab "
                                        "applies them to every request");
                continue;
            }
            if (!first) first = p;
            if (p != first && p->kind != "backend" && !warned.count(p)) {
                warned[p] = 1;
                log_.warning(p->at, "ratelab does not tell frontends apart: the limits of " +
                                        p->kind + " " + p->name +
                                        " apply to every request, beside those of " + first->kind +
                                        " " + first->name);
            }
        }
    }

    struct Imported {
        const Rule* deny;
        const Rule* tracker;
        const Proxy* proxy;
    };

    const HaproxyModel& model_;
    ImportLog& log_;
    PolicyNames names_;
    std::vector<Imported> imported_;
    std::map<const Rule*, int> warnedStatus_;
};

}  // namespace

std::optional<PolicyJson> mapHaproxyConfig(const HaproxyConfig& config, ImportLog& log) {
    if (log.hasErrors()) return std::nullopt;
    // The rules are mapped even when a table or an ACL had an error, so that every problem is
    // reported at once; the file is then not written.
    const HaproxyModel model = readHaproxyModel(config, log);
    Mapper mapper(model, log);
    std::optional<PolicyJson> file = mapper.map();
    if (log.hasErrors()) return std::nullopt;
    return file;
}

namespace {

ImportResult finishHaproxy(const HaproxyConfig& config, ImportLog& log, bool unreadable) {
    std::optional<PolicyJson> file = mapHaproxyConfig(config, log);
    return finishImport(log, file, unreadable);
}

}  // namespace

ImportResult importHaproxy(const std::vector<std::string>& files) {
    ImportLog log;
    const HaproxyConfig config = readHaproxyConfig(files, log);
    if (files.empty()) {
        log.addFile("");
        log.error(SourcePos{0, 0, 0}, "no configuration file");
    }
    return finishHaproxy(config, log, config.unreadable);
}

ImportResult importHaproxyText(std::string_view text, const std::string& name) {
    ImportLog log;
    HaproxyConfig config;
    parseHaproxyText(text, name, config, log);
    return finishHaproxy(config, log, false);
}

}  // namespace ratelab::formats::haproxy
