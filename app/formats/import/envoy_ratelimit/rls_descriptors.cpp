// The RLS lookup for descriptors whose request parts have no known value.

#include "formats/import/envoy_ratelimit/rls_descriptors.h"

namespace ratelab::formats::envoy_ratelimit {

using envoy::DescriptorNode;

namespace {

SourcePos at(const DescriptorNode& node, int file) {
    return SourcePos{file, node.at.line, node.at.column};
}

// The node the service picks for a constant entry: exact key_value, else the first wildcard
// that matches it, else the key alone.
const DescriptorNode* constantChild(const std::vector<DescriptorNode>& children,
                                    const DescriptorEntry& e) {
    const std::string text = e.key + "_" + *e.value;
    for (const DescriptorNode& c : children) {
        if (!c.wildcard && c.compositeKey == text) return &c;
    }
    for (const DescriptorNode& c : children) {
        if (c.wildcard && envoy::wildcardMatches(c.compositeKey, text)) return &c;
    }
    for (const DescriptorNode& c : children) {
        if (!c.wildcard && c.value.empty() && c.key == e.key) return &c;
    }
    return nullptr;
}

// For a request part: a wildcard that matches every value ("KEY_*") is the service's pick for
// every request; else the key alone, which the values of exact and partial wildcard siblings
// do not reach (warned about: a policy cannot match a value).
const DescriptorNode* partChild(const std::vector<DescriptorNode>& children,
                                const DescriptorEntry& e, int file, ImportLog& log) {
    const DescriptorNode* any = nullptr;
    const DescriptorNode* keyOnly = nullptr;
    for (const DescriptorNode& c : children) {
        if (c.key != e.key) continue;
        if (c.wildcard && c.compositeKey == e.key + "_*") {
            if (!any) any = &c;
        } else if (c.value.empty() && !c.wildcard) {
            keyOnly = &c;
        } else if (!c.wildcard || !any) {
            log.warning(at(c, file), "descriptor " + c.compositeKey + " applies only when " +
                                         e.what + " is \"" + c.value +
                                         "\"; a policy cannot match a value: not imported (those "
                                         "requests are counted as the other values are)");
        }
    }
    return any ? any : keyOnly;
}

}  // namespace

std::optional<DescriptorMatch> matchDescriptor(const std::vector<DescriptorNode>& roots,
                                               const std::vector<DescriptorEntry>& entries,
                                               int file, ImportLog& log) {
    if (entries.empty()) return std::nullopt;
    DescriptorMatch m;
    const std::vector<DescriptorNode>* children = &roots;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const DescriptorEntry& e = entries[i];
        const DescriptorNode* picked =
            e.value ? constantChild(*children, e) : partChild(*children, e, file, log);
        if (!picked) return std::nullopt;
        m.path.push_back(picked);
        if (!e.value && !(picked->wildcard && picked->shareThreshold)) m.parts.push_back(e.part);
        if (i + 1 == entries.size()) {
            if (!picked->rule) return std::nullopt;
            m.node = picked;
            return m;
        }
        children = &picked->children;
    }
    return std::nullopt;
}

PolicyJson keyFor(const std::vector<KeyPartSpec>& parts, SourcePos where, ImportLog& log) {
    if (parts.empty()) return PolicyJson{{"source", "composite"}, {"parts", {"route"}}};
    if (parts.size() == 1) {
        const KeyPartSpec& p = parts.front();
        if (p.kind == KeyPartSpec::Kind::Header)
            return PolicyJson{{"source", "header"}, {"header", p.header}, {"when_missing", "skip"}};
        return PolicyJson{
            {"source", "peer"}, {"ipv4_prefix", p.ipv4Prefix}, {"ipv6_prefix", p.ipv6Prefix}};
    }
    PolicyJson names = PolicyJson::array();
    const KeyPartSpec* peer = nullptr;
    for (const KeyPartSpec& p : parts) {
        if (p.kind == KeyPartSpec::Kind::Header) {
            names.push_back("header:" + p.header);
            continue;
        }
        if (peer && !(*peer == p)) {
            log.warning(where,
                        "the descriptor carries the client address twice, masked "
                        "differently; the import keys by the first mask only");
            continue;
        }
        if (!peer) names.push_back("peer");
        peer = &p;
    }
    PolicyJson key{{"source", "composite"}, {"parts", names}};
    if (peer) {
        key["ipv4_prefix"] = peer->ipv4Prefix;
        key["ipv6_prefix"] = peer->ipv6Prefix;
    }
    key["when_missing"] = "skip";
    return key;
}

}  // namespace ratelab::formats::envoy_ratelimit
