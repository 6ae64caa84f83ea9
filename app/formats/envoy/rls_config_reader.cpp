// One file of Envoy's rate limit service configuration: YAML tree -> DomainConfig. The checks and
// their wording follow what envoyproxy/ratelimit's loader refuses (its message text where it has
// one), with every problem reported rather than the first, each where it was written. Keys the
// original accepts at any level but ignores outside their own (its one flat list of keys) are
// warnings, so a file it loads loads here too.

#include "formats/envoy/rls_config_reader.h"

#include <algorithm>
#include <array>
#include <map>

namespace ratelab::formats::envoy {

namespace {

using Kind = YamlNode::Kind;

// The original's one list of keys, valid at every level.
constexpr std::array<std::string_view, 16> kOriginalKeys = {"domain",
                                                            "key",
                                                            "value",
                                                            "descriptors",
                                                            "rate_limit",
                                                            "unit",
                                                            "requests_per_unit",
                                                            "unlimited",
                                                            "shadow_mode",
                                                            "quota_mode",
                                                            "name",
                                                            "replaces",
                                                            "detailed_metric",
                                                            "value_to_metric",
                                                            "share_threshold",
                                                            "metadata"};

constexpr std::array<std::string_view, 2> kRootKeys = {"domain", "descriptors"};
constexpr std::array<std::string_view, 12> kDescriptorKeys = {
    "key",         "value",           "rate_limit",      "descriptors",     "shadow_mode",
    "quota_mode",  "detailed_metric", "value_to_metric", "share_threshold", "metadata",
    "rate_limits", "identity"};
constexpr std::array<std::string_view, 6> kRateLimitKeys = {
    "unit", "requests_per_unit", "unlimited", "name", "replaces", "ratelab"};
constexpr std::array<std::string_view, 1> kReplacesKeys = {"name"};

// Descriptor trees deeper than this are refused: requests carry a few entries, and the
// decider walks one level per entry.
constexpr int kMaxDescriptorDepth = 32;

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string kindText(const YamlNode& n) {
    switch (n.kind) {
        case Kind::Null:
            return "nothing";
        case Kind::Sequence:
            return "a list";
        case Kind::Map:
            return "a map";
        case Kind::Scalar:
            break;
    }
    return "'" + n.text + "'";
}

class FileReader {
public:
    FileReader(const RlsSource& source, std::vector<Diagnostic>& out)
        : sink_(source.name, out), file_(source.name) {}

    // The file's domain; nullopt when the file has no usable domain.
    std::optional<DomainConfig> read(const std::string& text) {
        YamlParseResult parsed = parseYaml(text);
        if (!parsed.ok) {
            sink_.error(parsed.errorAt.line > 0 ? parsed.errorAt : YamlMark{1, 1}, "",
                        "error loading config file: " + parsed.error);
            return std::nullopt;
        }
        if (parsed.moreDocuments) {
            sink_.warning(
                parsed.secondDocumentAt.line > 0 ? parsed.secondDocumentAt : YamlMark{1, 1}, "",
                "only the first YAML document of a file is read (as envoyproxy/ratelimit "
                "does); this one and any after it are ignored");
        }
        const YamlNode& root = parsed.root;
        DomainConfig domain;
        domain.file = file_;
        domain.at = {1, 1};
        if (root.isNull()) {
            sink_.error({1, 1}, "", "config file cannot have empty domain");
            return std::nullopt;
        }
        if (!root.isMap()) {
            sink_.error(root.at, "",
                        "error loading config file: the document must be a map with domain and "
                        "descriptors, found " +
                            kindText(root));
            return std::nullopt;
        }
        const YamlNode* domainNode = nullptr;
        const YamlNode* descriptors = nullptr;
        forEachKey(root, "", kRootKeys,
                   [&](const std::string& key, const YamlNode& value, const std::string& pointer) {
                       if (key == "domain") {
                           domainNode = &value;
                           readString(value, pointer, "domain", domain.domain);
                       } else if (key == "descriptors") {
                           descriptors = &value;
                           (void)pointer;
                       }
                   });
        if (domain.domain.empty()) {
            sink_.error(domainNode ? domainNode->at : root.at, domainNode ? "/domain" : "",
                        "config file cannot have empty domain");
        } else {
            domain.at = {domainNode->at.line, domainNode->at.column};
        }
        if (descriptors) {
            readDescriptors(*descriptors, "/descriptors", domain.domain, 1, domain.descriptors);
        }
        if (domain.domain.empty()) return std::nullopt;
        return domain;
    }

    RlsDiagnostics& sink() { return sink_; }

private:
    // Calls `visit(key, value, pointer)` for each entry of `map` whose key belongs at this level,
    // in file order; reports the others. The later of two equal keys is the one used, as in the
    // original, with a warning.
    template <std::size_t N, class Visit>
    void forEachKey(const YamlNode& map, const std::string& pointer,
                    const std::array<std::string_view, N>& keys, Visit visit) {
        std::map<std::string, std::size_t> last;
        for (std::size_t i = 0; i < map.entries.size(); ++i) {
            const YamlNode& k = map.entries[i].key;
            if (!checkKey(k, keys)) continue;
            auto [it, fresh] = last.emplace(k.text, i);
            if (!fresh) {
                const YamlNode& earlier = map.entries[it->second].key;
                sink_.warning(earlier.at, pointer + "/" + k.text,
                              "duplicate key '" + k.text + "': the later one, at line " +
                                  std::to_string(k.at.line) +
                                  ", is used (as envoyproxy/ratelimit does)");
                it->second = i;
            }
        }
        for (std::size_t i = 0; i < map.entries.size(); ++i) {
            const auto& [k, v] = map.entries[i];
            auto it = last.find(k.text);
            if (k.kind != Kind::Scalar || it == last.end() || it->second != i) continue;
            const std::string at = pointer + "/" + k.text;
            if (contains(keys, k.text)) {
                visit(k.text, v, at);
            } else {
                sink_.warning(k.at, at,
                              "'" + k.text +
                                  "' has no meaning here, and is ignored (as envoyproxy/ratelimit "
                                  "does)");
                checkLoose(v, at);
            }
        }
    }

    // Whether key `k` of a map is a string the level knows; reports it otherwise. A key of the
    // original's list is accepted anywhere (it is ignored outside its level).
    template <std::size_t N>
    bool checkKey(const YamlNode& k, const std::array<std::string_view, N>& keys) {
        const ScalarType type = scalarType(k);
        if (k.kind != Kind::Scalar || type != ScalarType::String) {
            sink_.error(k.at, "", "config error, key is not of type string: " + printed(k));
            return false;
        }
        if (contains(keys, k.text) || contains(kOriginalKeys, k.text)) return true;
        std::string message = "config error, unknown key '" + k.text + "'";
        std::string_view best;
        std::size_t bestDistance = 3;
        for (std::string_view candidate : keys) {
            const std::size_t d = editDistance(k.text, candidate);
            if (d < bestDistance) {
                bestDistance = d;
                best = candidate;
            }
        }
        if (!best.empty()) message += "; did you mean '" + std::string(best) + "'?";
        sink_.error(k.at, "", message);
        return false;
    }

    // What the original checks in every value it ignores: string keys of its list, lists of
    // maps, no floats.
    void checkLoose(const YamlNode& v, const std::string& pointer, int depth = 0) {
        if (depth > kMaxDescriptorDepth) return;
        if (v.isMap()) {
            for (const auto& [k, value] : v.entries) {
                if (!checkKey(k, kOriginalKeys)) continue;
                if (k.text != "metadata") checkLoose(value, pointer + "/" + k.text, depth + 1);
            }
        } else if (v.isSequence()) {
            for (std::size_t i = 0; i < v.items.size(); ++i) {
                if (!v.items[i].isMap()) {
                    listOfNonMaps(v.items[i]);
                } else {
                    checkLoose(v.items[i], pointer + "/" + std::to_string(i), depth + 1);
                }
            }
        } else if (scalarType(v) == ScalarType::Float) {
            floatLeaf(v, pointer);
        }
    }

    void listOfNonMaps(const YamlNode& item) {
        sink_.error(
            item.at, "",
            "config error, yaml file contains list of type other than map: " + printed(item));
    }

    void floatLeaf(const YamlNode& v, const std::string& pointer) {
        sink_.error(v.at, pointer,
                    "error checking config: " + v.text +
                        " is a floating-point number, which envoyproxy/ratelimit refuses "
                        "everywhere (quote it if it is text)");
    }

    // A string field: any scalar's text (an unquoted 123 or true is the text "123", "true", as
    // in the original), nothing for null.
    bool readString(const YamlNode& v, const std::string& pointer, std::string_view what,
                    std::string& out) {
        if (v.isNull()) return true;
        if (v.isScalar()) {
            if (scalarType(v) == ScalarType::Float) {
                floatLeaf(v, pointer);
                return false;
            }
            out = v.text;
            return true;
        }
        sink_.error(v.at, pointer,
                    "error loading config file: " + std::string(what) +
                        " must be a string, found " + kindText(v));
        if (v.isSequence()) checkLoose(v, pointer);
        return false;
    }

    bool readBool(const YamlNode& v, const std::string& pointer, std::string_view what, bool& out) {
        if (v.isNull()) return true;
        if (std::optional<bool> b = scalarBool(v)) {
            out = *b;
            return true;
        }
        if (scalarType(v) == ScalarType::Float) {
            floatLeaf(v, pointer);
            return false;
        }
        sink_.error(v.at, pointer,
                    "error loading config file: " + std::string(what) +
                        " must be true or false, found " + kindText(v));
        return false;
    }

    bool readUint32(const YamlNode& v, const std::string& pointer, std::string_view what,
                    std::uint32_t& out) {
        if (v.isNull()) return true;
        if (std::optional<std::int64_t> n = scalarInt(v); n && *n >= 0 && *n <= 4'294'967'295) {
            out = static_cast<std::uint32_t>(*n);
            return true;
        }
        if (scalarType(v) == ScalarType::Float) {
            floatLeaf(v, pointer);
            return false;
        }
        sink_.error(v.at, pointer,
                    "error loading config file: " + std::string(what) +
                        " must be a whole number from 0 to 4294967295, found " + kindText(v));
        return false;
    }

    // A list field: null is an empty list; a list's items must be maps.
    const YamlNode* readList(const YamlNode& v, const std::string& pointer, std::string_view what) {
        if (v.isNull()) return nullptr;
        if (!v.isSequence()) {
            sink_.error(v.at, pointer,
                        "error loading config file: " + std::string(what) +
                            " must be a list of maps, found " + kindText(v));
            return nullptr;
        }
        for (const YamlNode& item : v.items) {
            if (!item.isMap()) listOfNonMaps(item);
        }
        return &v;
    }

    void readDescriptors(const YamlNode& list, const std::string& pointer,
                         const std::string& parentPath, int depth,
                         std::vector<DescriptorNode>& out) {
        const YamlNode* items = readList(list, pointer, "descriptors");
        if (!items) return;
        if (depth > kMaxDescriptorDepth) {
            sink_.error(list.at, pointer,
                        "descriptors nested deeper than " + std::to_string(kMaxDescriptorDepth) +
                            " levels");
            return;
        }
        std::map<std::string, Position> seen;  // composite key -> where
        for (std::size_t i = 0; i < items->items.size(); ++i) {
            const YamlNode& item = items->items[i];
            if (!item.isMap()) continue;
            const std::string at = pointer + "/" + std::to_string(i);
            DescriptorNode node;
            if (!readDescriptor(item, at, parentPath, depth, node)) continue;
            auto [it, fresh] = seen.emplace(node.compositeKey, node.at);
            if (!fresh) {
                sink_.error({node.at.line, node.at.column}, at + "/key",
                            "duplicate descriptor composite key '" + parentPath + "." +
                                node.compositeKey + "' (first at line " +
                                std::to_string(it->second.line) + ")");
                continue;
            }
            out.push_back(std::move(node));
        }
    }

    // False when the node cannot take part (no key): its problems are reported.
    bool readDescriptor(const YamlNode& map, const std::string& pointer,
                        const std::string& parentPath, int depth, DescriptorNode& node) {
        node.at = {map.at.line, map.at.column};
        const YamlNode* keyNode = nullptr;
        const YamlNode* valueNode = nullptr;
        const YamlNode* rateLimit = nullptr;
        const YamlNode* rateLimits = nullptr;
        const YamlNode* children = nullptr;
        const YamlNode* identity = nullptr;
        const YamlNode* shareThreshold = nullptr;
        std::string rateLimitAt, rateLimitsAt, childrenAt, identityAt, shareAt;
        forEachKey(map, pointer, kDescriptorKeys,
                   [&](const std::string& key, const YamlNode& v, const std::string& at) {
                       if (key == "key") {
                           keyNode = &v;
                           readString(v, at, "key", node.key);
                       } else if (key == "value") {
                           valueNode = &v;
                           readString(v, at, "value", node.value);
                       } else if (key == "rate_limit") {
                           rateLimit = &v;
                           rateLimitAt = at;
                       } else if (key == "rate_limits") {
                           rateLimits = &v;
                           rateLimitsAt = at;
                       } else if (key == "descriptors") {
                           children = &v;
                           childrenAt = at;
                       } else if (key == "shadow_mode") {
                           readBool(v, at, key, node.shadowMode);
                       } else if (key == "quota_mode") {
                           readBool(v, at, key, node.quotaMode);
                       } else if (key == "detailed_metric") {
                           readBool(v, at, key, node.detailedMetric);
                       } else if (key == "value_to_metric") {
                           readBool(v, at, key, node.valueToMetric);
                       } else if (key == "share_threshold") {
                           shareThreshold = &v;
                           shareAt = at;
                           readBool(v, at, key, node.shareThreshold);
                       } else if (key == "identity") {
                           identity = &v;
                           identityAt = at;
                       }
                       // metadata: any value; the original returns it in dynamic metadata,
                       // unchecked.
                   });

        if (keyNode) node.at = {keyNode->at.line, keyNode->at.column};
        node.compositeKey = node.value.empty() ? node.key : node.key + "_" + node.value;
        node.wildcard = node.compositeKey.find('*') != std::string::npos;
        const std::string path =
            parentPath + "." + (node.key.empty() ? std::string("<no key>") : node.compositeKey);
        if (node.key.empty()) {
            sink_.error(keyNode ? keyNode->at : map.at, pointer + "/key",
                        "descriptor has empty key");
        }

        if (rateLimit && rateLimits) {
            sink_.error(rateLimits->at, rateLimitsAt,
                        "rate_limit and rate_limits exclude each other: write one limit in "
                        "rate_limit, or all of them in rate_limits");
        }
        if (rateLimit && rateLimit->isMap()) {
            node.rule.emplace();
            node.rule->at = {rateLimit->at.line, rateLimit->at.column};
            readRateLimit(*rateLimit, rateLimitAt, *node.rule, false);
        } else if (rateLimit && !rateLimit->isNull()) {
            sink_.error(rateLimit->at, rateLimitAt,
                        "error loading config file: rate_limit must be a map, found " +
                            kindText(*rateLimit));
            checkLoose(*rateLimit, rateLimitAt);
        }
        if (rateLimits && !rateLimit) readRateLimits(*rateLimits, rateLimitsAt, node);

        if (node.shareThreshold && !node.wildcard) {
            sink_.error(shareThreshold->at, shareAt,
                        "share_threshold can only be used with wildcard values (containing '*'), "
                        "but found key '" +
                            node.compositeKey + "'");
        }
        if (identity) readIdentity(*identity, identityAt, valueNode, node);

        if (children) readDescriptors(*children, childrenAt, path, depth + 1, node.children);
        return !node.key.empty();
    }

    void readIdentity(const YamlNode& v, const std::string& pointer, const YamlNode* valueNode,
                      DescriptorNode& node) {
        std::string name;
        if (!readString(v, pointer, "identity", name)) return;
        if (name == identityName(Identity::RemoteAddress)) {
            node.identity = Identity::RemoteAddress;
        } else if (name == identityName(Identity::Authorization)) {
            node.identity = Identity::Authorization;
        } else {
            sink_.error(v.at, pointer,
                        "identity must be remote_address or authorization, found '" + name + "'");
            return;
        }
        if (!node.value.empty()) {
            sink_.error(valueNode->at, pointer,
                        "a descriptor with an identity matches every value of its key: remove "
                        "value '" +
                            node.value + "'");
        } else if (node.wildcard) {
            sink_.error(v.at, pointer, "a descriptor with an identity cannot have a wildcard key");
        }
    }

    void readRateLimits(const YamlNode& v, const std::string& pointer, DescriptorNode& node) {
        const YamlNode* list = readList(v, pointer, "rate_limits");
        if (!list) return;
        if (list->items.empty()) {
            sink_.error(v.at, pointer, "rate_limits needs at least one limit");
            return;
        }
        node.rule.emplace();
        node.rule->at = {v.at.line, v.at.column};
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            if (!list->items[i].isMap()) continue;
            readRateLimit(list->items[i], pointer + "/" + std::to_string(i), *node.rule, true);
        }
        // Two equal limits on one key would be one bucket charged twice.
        const auto& limits = node.rule->limits;
        for (std::size_t i = 0; i < limits.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (limits[i].policy == limits[j].policy) {
                    sink_.error(
                        {limits[i].at.line, limits[i].at.column}, pointer + "/" + std::to_string(i),
                        "this limit repeats the one at line " + std::to_string(limits[j].at.line));
                    break;
                }
            }
        }
    }

    // One rate_limit map, or one item of rate_limits (`inList`), added to `rule`.
    void readRateLimit(const YamlNode& map, const std::string& pointer, RateRule& rule,
                       bool inList) {
        RateLimitSpec spec;
        spec.at = {map.at.line, map.at.column};
        std::string unitText;
        const YamlNode* unitNode = nullptr;
        const YamlNode* unlimitedNode = nullptr;
        const YamlNode* ratelab = nullptr;
        std::string ratelabAt;
        bool unlimited = false;
        bool unitOk = true;
        std::vector<std::pair<std::string, const YamlNode*>> replaces;
        forEachKey(map, pointer, kRateLimitKeys,
                   [&](const std::string& key, const YamlNode& v, const std::string& at) {
                       if (key == "unit") {
                           unitNode = &v;
                           unitOk = readString(v, at, "unit", unitText);
                       } else if (key == "requests_per_unit") {
                           readUint32(v, at, key, spec.requestsPerUnit);
                       } else if (key == "unlimited") {
                           unlimitedNode = &v;
                           readBool(v, at, key, unlimited);
                       } else if (key == "name") {
                           readString(v, at, key, spec.name);
                       } else if (key == "replaces") {
                           readReplaces(v, at, replaces);
                       } else if (key == "ratelab") {
                           ratelab = &v;
                           ratelabAt = at;
                       }
                   });

        const std::optional<RateUnit> unit = parseRateUnit(unitText);
        const YamlNode& unitAt = unitNode ? *unitNode : map;
        if (inList && unlimited) {
            sink_.error(unlimitedNode->at, pointer + "/unlimited",
                        "unlimited has no place in rate_limits: write rate_limit: {unlimited: "
                        "true} for a descriptor that is never limited");
        } else if (unlimited && unit) {
            sink_.error(unitAt.at, pointer + "/unit",
                        "should not specify rate limit unit when unlimited");
        } else if (!unlimited && !unit && unitOk) {
            sink_.error(unitAt.at, pointer + "/unit",
                        "invalid rate limit unit '" + unitText +
                            "' (second, minute, hour, day, week, month or year)");
        }
        for (const auto& [name, node] : replaces) {
            if (name.empty()) {
                sink_.error(node->at, pointer + "/replaces",
                            "should not have an empty replaces entry");
            } else if (name == spec.name) {
                sink_.error(node->at, pointer + "/replaces",
                            "replaces should not contain name of same descriptor");
            } else {
                rule.replaces.push_back(name);
            }
        }

        if (unlimited) {
            if (ratelab) {
                sink_.error(ratelab->at, ratelabAt,
                            "an unlimited rule is never counted: a ratelab block has nothing to "
                            "choose");
            }
            rule.unlimited = !inList;
            return;
        }
        if (!unit) return;
        spec.unit = *unit;
        spec.policy = calendarWindowPolicy(spec.unit, spec.requestsPerUnit);
        if (ratelab) {
            if (ratelab->isMap()) {
                readRatelabBlock(*ratelab, ratelabAt, spec, sink_);
            } else {
                sink_.error(ratelab->at, ratelabAt,
                            "the ratelab block must be a map (algorithm and its numbers, as in a "
                            "ratelab policy file), found " +
                                kindText(*ratelab));
            }
        }
        if (!spec.name.empty()) spec.policy.name = spec.name;
        rule.limits.push_back(std::move(spec));
    }

    void readReplaces(const YamlNode& v, const std::string& pointer,
                      std::vector<std::pair<std::string, const YamlNode*>>& out) {
        const YamlNode* list = readList(v, pointer, "replaces");
        if (!list) return;
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            const YamlNode& item = list->items[i];
            if (!item.isMap()) continue;
            std::string name;
            const YamlNode* nameNode = &item;
            forEachKey(item, pointer + "/" + std::to_string(i), kReplacesKeys,
                       [&](const std::string&, const YamlNode& value, const std::string& at) {
                           nameNode = &value;
                           readString(value, at, "name", name);
                       });
            out.emplace_back(std::move(name), nameNode);
        }
    }

    RlsDiagnostics sink_;
    std::string file_;
};

// Adds `from`'s descriptors to `into`'s (merged domains), refusing composite keys `into`
// already has at the top level; deeper levels cannot meet, since each top-level node comes
// whole from one file.
void mergeDescriptors(DomainConfig& into, DomainConfig&& from, RlsDiagnostics& sink) {
    for (DescriptorNode& node : from.descriptors) {
        auto same = std::find_if(
            into.descriptors.begin(), into.descriptors.end(),
            [&](const DescriptorNode& d) { return d.compositeKey == node.compositeKey; });
        if (same != into.descriptors.end()) {
            sink.error({node.at.line, node.at.column}, "",
                       "duplicate descriptor composite key '" + into.domain + "." +
                           node.compositeKey + "' (also in " + into.file + " at line " +
                           std::to_string(same->at.line) + ")");
            continue;
        }
        into.descriptors.push_back(std::move(node));
    }
}

}  // namespace

Policy calendarWindowPolicy(RateUnit unit, std::uint32_t requestsPerUnit) {
    Policy p;
    p.name = "rls";
    p.algorithm = Algorithm::FixedWindow;
    p.capacity = requestsPerUnit;
    p.windowMs = unitSeconds(unit) * 1000;
    // The original's windows: [now - now mod U, + U) on the Unix epoch, the same for every key
    // (its month is 30 days and its year 365, from the epoch, not the calendar's).
    p.align = WindowAlign::Calendar;
    return p;
}

void readRlsFile(const RlsSource& source, const RlsLoadOptions& options, RlsConfig& config,
                 std::vector<Diagnostic>& out) {
    FileReader reader(source, out);
    std::optional<DomainConfig> domain = reader.read(source.text);
    if (!domain) return;
    auto existing = std::find_if(config.domains.begin(), config.domains.end(),
                                 [&](const DomainConfig& d) { return d.domain == domain->domain; });
    if (existing == config.domains.end()) {
        config.domains.push_back(std::move(*domain));
        return;
    }
    if (!options.mergeDomains) {
        reader.sink().error({domain->at.line, domain->at.column}, "/domain",
                            "duplicate domain '" + domain->domain + "' in config file (first in " +
                                existing->file + " at line " + std::to_string(existing->at.line) +
                                "; several files share a domain only when domains are merged)");
        return;
    }
    mergeDescriptors(*existing, std::move(*domain), reader.sink());
}

}  // namespace ratelab::formats::envoy
