// Stick tables, ACLs and rules out of HAProxy's sections, checked as HAProxy checks them.

#include "formats/import/haproxy/haproxy_model.h"

#include <algorithm>

namespace ratelab::formats::haproxy {

namespace {

constexpr std::size_t kMaxConjuncts = 64;

// The data types a stick table stores in HAProxy 2.6, and whether they take a period.
bool knownStore(std::string_view name, bool& period) {
    static const char* const kCounters[] = {
        "server_id",     "server_key",   "gpt0",         "gpc0",         "gpc1",
        "conn_cnt",      "conn_cur",     "sess_cnt",     "http_req_cnt", "http_err_cnt",
        "http_fail_cnt", "bytes_in_cnt", "bytes_out_cnt"};
    static const char* const kRates[] = {"gpc0_rate",      "gpc1_rate",     "conn_rate",
                                         "sess_rate",      "http_req_rate", "http_err_rate",
                                         "http_fail_rate", "bytes_in_rate", "bytes_out_rate"};
    for (const char* n : kCounters) {
        if (name == n) {
            period = false;
            return true;
        }
    }
    for (const char* n : kRates) {
        if (name == n) {
            period = true;
            return true;
        }
    }
    if (name == "gpt" || name == "gpc" || name == "gpc_rate") {
        period = name == "gpc_rate";
        return true;
    }
    return false;
}

std::optional<std::int64_t> haproxySize(std::string_view text) {
    if (text.empty()) return std::nullopt;
    std::int64_t scale = 1;
    const char last = text.back();
    if (last == 'k' || last == 'K') scale = 1024;
    if (last == 'm' || last == 'M') scale = 1024 * 1024;
    if (last == 'g' || last == 'G') scale = 1024LL * 1024 * 1024;
    if (scale != 1) text.remove_suffix(1);
    if (text.empty() || text.size() > 12) return std::nullopt;
    std::int64_t n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    return n * scale;
}

struct NamedAcl {
    std::vector<Term> alternatives;  // OR-ed, one per `acl` line
};

class ModelReader {
public:
    ModelReader(const HaproxyConfig& config, ImportLog& log, HaproxyModel& model)
        : config_(config), log_(log), model_(model) {}

    void read() {
        for (const HaproxySection& s : config_.sections) {
            if (s.kind == "peers") peersTables(s);
            if (s.kind == "frontend" || s.kind == "backend" || s.kind == "listen" ||
                s.kind == "defaults")
                proxyTable(s);
        }
        int rank = 0;
        for (const HaproxySection& s : config_.sections) {
            if (s.kind != "frontend" && s.kind != "backend" && s.kind != "listen") continue;
            if (s.name.empty()) {
                log_.error(s.at, "'" + s.kind + "' expects <name> as an argument");
                continue;
            }
            Proxy p;
            p.kind = s.kind;
            p.name = s.name;
            p.at = s.at;
            acls_.clear();
            for (const HaproxyLine& line : s.lines) {
                if (line.keyword() == "acl") acl(line);
            }
            // HAProxy runs tcp-request rules before http-request rules, and a frontend's
            // before the backend's.
            const int base = (s.kind == "backend" ? 2 : 0) * 1'000'000;
            for (const HaproxyLine& line : s.lines) {
                if (line.keyword() == "tcp-request") rule(line, p, true, base + (++rank));
            }
            for (const HaproxyLine& line : s.lines) {
                if (line.keyword() == "http-request")
                    rule(line, p, false, base + 1'000'000 + (++rank));
            }
            model_.proxies.push_back(std::move(p));
        }
        for (const Proxy& p : model_.proxies) {
            for (const Rule& r : p.rules) {
                if (r.kind == RuleKind::Track && !model_.table(r.table)) {
                    log_.error(r.table.empty() || r.tableAt.line == 0 ? r.at : r.tableAt,
                               "'" + r.action + "': unable to find table '" + r.table + "'" +
                                   (r.tableAt.line == 0 ? " (the proxy has no stick-table)" : ""));
                }
            }
        }
    }

private:
    // stick-table ... in a proxy, or table NAME ... in a peers section.
    void parseTable(const HaproxyLine& line, std::size_t first, Table t) {
        bool haveType = false, haveSize = false;
        const std::vector<HaproxyWord>& w = line.words;
        for (std::size_t i = first; i < w.size(); ++i) {
            const std::string& k = w[i].text;
            auto value = [&](std::string_view what) -> const HaproxyWord* {
                if (i + 1 >= w.size()) {
                    log_.error(w[i].at, "'stick-table': missing " + std::string(what) + " after '" +
                                            k + "'");
                    return nullptr;
                }
                return &w[++i];
            };
            if (k == "type") {
                const HaproxyWord* v = value("type");
                if (!v) return;
                const std::string& type = v->text;
                if (type == "ip") {
                    t.type = Table::Type::Ip;
                } else if (type == "ipv6") {
                    t.type = Table::Type::Ipv6;
                } else if (type == "integer") {
                    t.type = Table::Type::Integer;
                } else if (type == "string") {
                    t.type = Table::Type::String;
                } else if (type == "binary") {
                    t.type = Table::Type::Binary;
                } else {
                    log_.error(v->at, "'stick-table': unknown type '" + type + "'");
                    return;
                }
                haveType = true;
                if (i + 1 < w.size() && w[i + 1].text == "len") {
                    ++i;
                    const HaproxyWord* len = value("length");
                    if (!len) return;
                    std::optional<std::int64_t> n = haproxySize(len->text);
                    if (!n || *n < 1 ||
                        (t.type != Table::Type::String && t.type != Table::Type::Binary)) {
                        log_.error(len->at, "'stick-table': invalid length '" + len->text + "'");
                        return;
                    }
                    t.length = *n;
                    t.lengthSet = true;
                }
            } else if (k == "size") {
                const HaproxyWord* v = value("size");
                if (!v) return;
                std::optional<std::int64_t> n = haproxySize(v->text);
                if (!n) {
                    log_.error(v->at, "'stick-table': invalid size '" + v->text +
                                          "' (a whole number, with k, m or g)");
                    return;
                }
                t.size = *n;
                haveSize = true;
            } else if (k == "expire") {
                const HaproxyWord* v = value("expiration delay");
                if (!v) return;
                std::optional<std::int64_t> ms = haproxyTimeMs(v->text);
                if (!ms || *ms > 2147483647) {
                    log_.error(v->at, "'stick-table': invalid expire '" + v->text +
                                          "' (a time: 10s, 1m, 500ms, ...)");
                    return;
                }
                t.expireMs = *ms;
            } else if (k == "store") {
                const HaproxyWord* v = value("data type");
                if (!v) return;
                if (t.storeAt.line == 0) t.storeAt = v->at;
                if (!stores(*v, t)) return;
            } else if (k == "nopurge" || k == "peers" || k == "srvkey" || k == "write-to" ||
                       k == "recv-only") {
                if (k != "nopurge" && !value("argument")) return;
            } else {
                log_.error(w[i].at, "'stick-table': unknown argument '" + k + "'");
                return;
            }
        }
        if (!haveType) {
            log_.error(line.at(), "'stick-table': missing type");
            return;
        }
        if (!haveSize) {
            log_.error(line.at(), "'stick-table': missing size");
            return;
        }
        for (const Table& other : model_.tables) {
            if (other.name == t.name) {
                log_.error(line.at(), "table '" + t.name + "' is declared again (first at " +
                                          lineRef(log_, other.at) + ")");
                return;
            }
        }
        model_.tables.push_back(std::move(t));
    }

    bool stores(const HaproxyWord& word, Table& t) {
        std::size_t pos = 0;
        const std::string& list = word.text;
        while (pos <= list.size()) {
            // Split at commas outside parentheses: gpc_rate(1,10s) has one inside.
            std::size_t end = pos;
            int depth = 0;
            while (end < list.size() && (list[end] != ',' || depth > 0)) {
                if (list[end] == '(') ++depth;
                if (list[end] == ')') --depth;
                ++end;
            }
            const std::string item = list.substr(pos, end - pos);
            pos = end + 1;
            const std::size_t open = item.find('(');
            const std::string name = item.substr(0, open);
            bool period = false;
            if (!knownStore(name, period)) {
                log_.error(word.at, "'stick-table': unknown data type '" + name + "'");
                return false;
            }
            std::int64_t ms = 0;
            if (period) {
                if (open == std::string::npos || item.back() != ')') {
                    log_.error(word.at, "'stick-table': data type '" + name +
                                            "' needs a period, as in " + name + "(10s)");
                    return false;
                }
                std::string arg = item.substr(open + 1, item.size() - open - 2);
                if (const std::size_t comma = arg.rfind(','); comma != std::string::npos)
                    arg = arg.substr(comma + 1);
                std::optional<std::int64_t> p = haproxyTimeMs(arg);
                if (!p || *p <= 0) {
                    log_.error(word.at,
                               "'stick-table': invalid period '" + arg + "' for '" + name + "'");
                    return false;
                }
                ms = *p;
            }
            t.stores[name] = ms;
            if (end >= list.size()) break;
        }
        return true;
    }

    void proxyTable(const HaproxySection& s) {
        for (const HaproxyLine& line : s.lines) {
            if (line.keyword() != "stick-table") continue;
            if (s.kind == "defaults") {
                log_.error(line.at(), "'stick-table' is not supported in 'defaults' section");
                continue;
            }
            if (std::any_of(model_.tables.begin(), model_.tables.end(),
                            [&](const Table& t) { return t.name == s.name; })) {
                log_.error(line.at(), "only one stick-table per proxy ('" + s.name + "')");
                continue;
            }
            Table t;
            t.name = s.name;
            t.at = line.at();
            parseTable(line, 1, std::move(t));
        }
    }

    void peersTables(const HaproxySection& s) {
        for (const HaproxyLine& line : s.lines) {
            if (line.keyword() != "table") continue;
            if (line.words.size() < 2) {
                log_.error(line.at(), "'table' expects a name");
                continue;
            }
            Table t;
            t.name = s.name + "/" + line.words[1].text;
            t.at = line.at();
            parseTable(line, 2, std::move(t));
        }
    }

    // FETCH [flags] [op] values, from words[first] to words[last).
    std::optional<Term> term(const std::vector<HaproxyWord>& w, std::size_t first,
                             std::size_t last) {
        if (first >= last) {
            log_.error(w[first > 0 ? first - 1 : 0].at, "missing fetch method in ACL");
            return std::nullopt;
        }
        Term t;
        t.at = w[first].at;
        if (!parseSample(w[first].text, t.sample)) {
            log_.error(w[first].at, "unbalanced parentheses in '" + w[first].text + "'");
            return std::nullopt;
        }
        std::size_t i = first + 1;
        while (i < last && w[i].text.size() > 1 && w[i].text[0] == '-') {
            const std::string& f = w[i].text;
            if (f == "--") {
                ++i;
                break;
            }
            t.flags.push_back(f);
            if ((f == "-m" || f == "-f" || f == "-M" || f == "-u") && i + 1 < last) {
                if (f == "-m") t.matchMethod = w[i + 1].text;
                t.flags.push_back(w[i + 1].text);
                ++i;
            }
            ++i;
        }
        if (i < last) {
            const std::string& op = w[i].text;
            if (op == "gt" || op == "ge" || op == "lt" || op == "le" || op == "eq") {
                t.op = op;
                ++i;
            }
        }
        for (; i < last; ++i)
            t.values.push_back(w[i].text);
        return t;
    }

    void acl(const HaproxyLine& line) {
        if (line.words.size() < 3) {
            log_.error(line.at(), "'acl' expects a name and a fetch method");
            return;
        }
        std::optional<Term> t = term(line.words, 2, line.words.size());
        if (!t) return;
        t->name = line.words[1].text;
        acls_[t->name].alternatives.push_back(*t);
    }

    // A condition's words (after if/unless) as an OR of ANDs.
    std::optional<Condition> condition(const std::vector<HaproxyWord>& w, std::size_t first,
                                       bool unless) {
        // Each AND-ed item is an OR of terms (a named ACL of several lines).
        std::vector<std::vector<std::vector<Term>>> ors(1);
        bool negate = false;
        for (std::size_t i = first; i < w.size(); ++i) {
            const std::string& word = w[i].text;
            if (word == "||" || word == "or") {
                ors.emplace_back();
                continue;
            }
            if (word == "!") {
                negate = !negate;
                continue;
            }
            std::vector<Term> item;
            // "!{" is a negated anonymous ACL, as HAProxy reads it.
            std::string_view bare = word;
            while (bare.size() > 1 && bare.front() == '!') {
                negate = !negate;
                bare.remove_prefix(1);
            }
            if (bare == "{") {
                std::size_t close = i + 1;
                while (close < w.size() && w[close].text != "}")
                    ++close;
                if (close >= w.size()) {
                    log_.error(w[i].at, "missing closing '}' in condition");
                    return std::nullopt;
                }
                std::optional<Term> t = term(w, i + 1, close);
                if (!t) return std::nullopt;
                item.push_back(*t);
                i = close;
            } else {
                std::string name(bare);
                while (name.starts_with("!")) {
                    negate = !negate;
                    name.erase(0, 1);
                }
                auto found = acls_.find(name);
                if (found != acls_.end()) {
                    item = found->second.alternatives;
                } else if (std::optional<Term> builtin = predefinedAcl(name, w[i].at)) {
                    item.push_back(*builtin);
                } else {
                    log_.error(w[i].at, "no such ACL : '" + name + "'");
                    return std::nullopt;
                }
            }
            if (negate) {
                // !(a || b) == !a && !b: each alternative negated becomes its own AND-ed item.
                for (Term t : item) {
                    t.negated = !t.negated;
                    ors.back().push_back({t});
                }
            } else {
                ors.back().push_back(std::move(item));
            }
            negate = false;
        }
        Condition dnf;
        for (const auto& conjunction : ors) {
            if (conjunction.empty()) {
                log_.error(w[first > 0 ? first - 1 : 0].at, "empty term in condition");
                return std::nullopt;
            }
            std::vector<std::vector<Term>> product{{}};
            for (const std::vector<Term>& choices : conjunction) {
                std::vector<std::vector<Term>> next;
                for (const auto& partial : product) {
                    for (const Term& t : choices) {
                        next.push_back(partial);
                        next.back().push_back(t);
                    }
                }
                product = std::move(next);
                if (product.size() > kMaxConjuncts) {
                    log_.error(w[first].at, "condition too complex to import");
                    return std::nullopt;
                }
            }
            dnf.insert(dnf.end(), product.begin(), product.end());
        }
        if (!unless) return dnf;
        // unless C: !(OR_i AND_j t_ij) == AND_i OR_j !t_ij, distributed back into an OR of ANDs.
        Condition negated{{}};
        for (const auto& conjunct : dnf) {
            Condition next;
            for (const auto& partial : negated) {
                for (Term t : conjunct) {
                    t.negated = !t.negated;
                    next.push_back(partial);
                    next.back().push_back(t);
                }
            }
            negated = std::move(next);
            if (negated.size() > kMaxConjuncts) {
                log_.error(w[first].at, "condition too complex to import");
                return std::nullopt;
            }
        }
        return negated;
    }

    // HAProxy's predefined ACLs that a route can say.
    std::optional<Term> predefinedAcl(const std::string& name, SourcePos at) {
        Term t;
        t.name = name;
        t.at = at;
        if (name == "TRUE" || name == "FALSE") {
            t.sample.fetch = "always_" + std::string(name == "TRUE" ? "true" : "false");
            return t;
        }
        if (name.starts_with("METH_")) {
            t.sample.fetch = "method";
            t.values.push_back(name.substr(5));
            return t;
        }
        if (name == "HTTP" || name == "HTTP_1.0" || name == "HTTP_1.1" || name == "HTTP_2.0" ||
            name == "HTTP_CONTENT" || name == "HTTP_URL_ABS" || name == "HTTP_URL_SLASH" ||
            name == "HTTP_URL_STAR" || name == "LOCALHOST" || name == "REQ_CONTENT" ||
            name == "RDP_COOKIE" || name == "WAIT_END") {
            t.sample.fetch = name;
            return t;
        }
        return std::nullopt;
    }

    void rule(const HaproxyLine& line, Proxy& p, bool tcp, int order) {
        const std::vector<HaproxyWord>& w = line.words;
        std::size_t a = 1;
        if (tcp) {
            if (w.size() < 2) return;
            const std::string& phase = w[1].text;
            if (phase != "connection" && phase != "session" && phase != "content") return;
            a = 2;
        }
        if (a >= w.size()) {
            log_.error(line.at(), "'" + line.keyword() + "' expects an action");
            return;
        }
        Rule r;
        r.at = line.at();
        r.order = order;
        r.tcp = tcp;
        r.action = w[a].text;
        std::size_t cond = a + 1;
        while (cond < w.size() && w[cond].text != "if" && w[cond].text != "unless")
            ++cond;
        if (cond < w.size()) {
            if (cond + 1 >= w.size()) {
                log_.error(w[cond].at, "missing condition after '" + w[cond].text + "'");
                return;
            }
            std::optional<Condition> c = condition(w, cond + 1, w[cond].text == "unless");
            if (!c) return;
            r.conditional = true;
            r.condition = std::move(*c);
        }
        const std::string& act = r.action;
        if (act.starts_with("track-sc")) {
            r.kind = RuleKind::Track;
            const std::string n = act.substr(8);
            if (n.size() != 1 || n[0] < '0' || n[0] > '2') {
                log_.error(w[a].at, "'" + act +
                                        "': HAProxy 2.6 has track-sc0, track-sc1 and "
                                        "track-sc2");
                return;
            }
            r.slot = n[0] - '0';
            if (a + 1 >= cond) {
                log_.error(w[a].at, "'" + act + "' expects a sample expression");
                return;
            }
            if (!parseSample(w[a + 1].text, r.key)) {
                log_.error(w[a + 1].at, "unbalanced parentheses in '" + w[a + 1].text + "'");
                return;
            }
            r.keyAt = w[a + 1].at;
            r.table = p.name;
            for (std::size_t i = a + 2; i < cond; ++i) {
                if (w[i].text == "table" && i + 1 < cond) {
                    r.table = w[i + 1].text;
                    r.tableAt = w[i + 1].at;
                    ++i;
                } else {
                    log_.error(w[i].at, "'" + act + "': unexpected '" + w[i].text + "'");
                    return;
                }
            }
        } else if (act == "deny" || act == "tarpit" || act == "reject" || act == "silent-drop" ||
                   act == "return") {
            r.kind = RuleKind::Deny;
            r.status = act == "tarpit" ? 500 : act == "return" ? 200 : 403;
            for (std::size_t i = a + 1; i + 1 < cond; ++i) {
                const std::string& k = w[i].text;
                if (k == "deny_status" || (act == "return" && k == "status")) {
                    const std::string& v = w[i + 1].text;
                    const bool digits = !v.empty() && v.size() <= 3 &&
                                        std::all_of(v.begin(), v.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
                    if (!digits || std::stoi(v) < 200 || std::stoi(v) > 599) {
                        log_.error(w[i + 1].at,
                                   "'" + k + "' expects a status code, found '" + v + "'");
                        return;
                    }
                    r.status = std::stoi(v);
                    r.statusSet = true;
                    ++i;
                }
            }
        } else if (act == "set-src") {
            r.kind = RuleKind::SetSrc;
        } else {
            r.kind = RuleKind::Other;
        }
        p.rules.push_back(std::move(r));
    }

    const HaproxyConfig& config_;
    ImportLog& log_;
    HaproxyModel& model_;
    std::map<std::string, NamedAcl> acls_;
};

}  // namespace

bool parseSample(const std::string& text, Sample& out) {
    out = Sample{};
    out.text = text;
    std::vector<std::pair<std::string, std::vector<std::string>>> parts;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::string name;
        while (pos < text.size() && text[pos] != '(' && text[pos] != ',')
            name.push_back(text[pos++]);
        std::vector<std::string> args;
        if (pos < text.size() && text[pos] == '(') {
            int depth = 1;
            std::string arg;
            ++pos;
            while (pos < text.size() && depth > 0) {
                const char c = text[pos++];
                if (c == '(') ++depth;
                if (c == ')' && --depth == 0) break;
                if (c == ',' && depth == 1) {
                    args.push_back(arg);
                    arg.clear();
                    continue;
                }
                arg.push_back(c);
            }
            if (depth != 0) return false;
            args.push_back(arg);
        }
        parts.emplace_back(name, args);
        if (pos < text.size()) {
            if (text[pos] != ',') return false;
            ++pos;
        }
    }
    if (parts.empty() || parts.front().first.empty()) return false;
    out.fetch = parts.front().first;
    out.args = parts.front().second;
    for (std::size_t i = 1; i < parts.size(); ++i)
        out.converters.push_back(Sample::Converter{parts[i].first, parts[i].second});
    return true;
}

std::optional<std::int64_t> haproxyTimeMs(std::string_view text, std::int64_t defaultUnitMs) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    if (digits == 0 || digits > 12) return std::nullopt;
    std::int64_t n = 0;
    for (std::size_t i = 0; i < digits; ++i)
        n = n * 10 + (text[i] - '0');
    const std::string_view unit = text.substr(digits);
    if (unit.empty()) return n * defaultUnitMs;
    if (unit == "us") return n / 1000;
    if (unit == "ms") return n;
    if (unit == "s") return n * 1000;
    if (unit == "m") return n * 60'000;
    if (unit == "h") return n * 3'600'000;
    if (unit == "d") return n * 86'400'000;
    return std::nullopt;
}

const Table* HaproxyModel::table(const std::string& name) const {
    for (const Table& t : tables) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

HaproxyModel readHaproxyModel(const HaproxyConfig& config, ImportLog& log) {
    HaproxyModel model;
    ModelReader(config, log, model).read();
    return model;
}

}  // namespace ratelab::formats::haproxy
