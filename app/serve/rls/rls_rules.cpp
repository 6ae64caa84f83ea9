#include "serve/rls/rls_rules.h"

#include <algorithm>

#include "serve/rls/rls_decider.h"

namespace ratelab::serve::rls {

namespace fe = formats::envoy;

namespace {

std::string limitNameOf(const Limit& l) {
    std::string name = "rls.";
    name += algorithmName(l.algorithm);
    name += "." + std::to_string(l.capacity) + ".";
    if (isRateAlgorithm(l.algorithm)) {
        name += std::to_string(l.emissionInterval) + "ns";
    } else {
        name += std::to_string(l.window / kNanosPerMilli) + "ms";
    }
    // Windows on the calendar and windows from a key's first request never share a bucket.
    if (l.align == WindowAlign::Calendar) name += ".calendar";
    if (l.algorithm == Algorithm::LeakyBucket) name += "." + std::to_string(l.delay);
    if (l.algorithm == Algorithm::HaproxyRate) {
        name += std::string(l.countRefused ? ".counted." : ".read.") +
                std::to_string(l.expire / kNanosPerMilli);
    }
    return name;
}

void compileNode(const fe::DescriptorNode& node, const CompiledNode& parent, LimitIds& ids,
                 PolicySet& headerPolicies, std::vector<CompiledPolicy>& headerCompiled,
                 CompiledNode& out) {
    out.node = &node;
    out.statsKey = parent.statsKey + "." + node.compositeKey;
    out.keyPrefix = parent.keyPrefix;
    appendKeyField(out.keyPrefix, node.compositeKey);
    if (node.rule && !node.rule->unlimited) {
        const auto& limits = node.rule->limits;
        for (std::size_t i = 0; i < limits.size(); ++i) {
            const fe::RateLimitSpec& spec = limits[i];
            CompiledLimit c;
            c.spec = &spec;
            c.calendar = !spec.extended;
            c.answer = {spec.requestsPerUnit, rlsUnit(spec.unit), spec.name};
            Policy policy = spec.policy;
            policy.name = !spec.name.empty()   ? spec.name
                          : limits.size() == 1 ? out.statsKey
                                               : out.statsKey + "/" + std::to_string(i + 1);
            // A window of requests_per_unit 0 is never run: every counted hit is over.
            if (policy.capacity < 1 && policy.algorithm != Algorithm::LeakyBucket) {
                policy.capacity = 1;
            }
            c.limit = compileLimit(policy);
            c.limitId = ids.idOf(c.limit);
            c.limitName = limitNameOf(c.limit);
            c.onStoreError = spec.onStoreError;
            c.headerPolicy = headerPolicies.policies.size();
            headerCompiled.push_back(compilePolicy(policy, c.limitId));
            headerPolicies.policies.push_back(std::move(policy));
            out.limits.push_back(std::move(c));
        }
    }
    out.children.resize(node.children.size());
    for (std::size_t i = 0; i < node.children.size(); ++i) {
        const fe::DescriptorNode& child = node.children[i];
        compileNode(child, out, ids, headerPolicies, headerCompiled, out.children[i]);
        out.byComposite.emplace(child.compositeKey, i);
        if (child.wildcard) out.wildcards.push_back(i);
    }
}

}  // namespace

std::uint32_t LimitIds::idOf(const Limit& limit) {
    std::lock_guard<std::mutex> guard(mutex_);
    for (const auto& [l, id] : ids_) {
        if (l == limit) return id;
    }
    ids_.emplace_back(limit, next_);
    return next_++;
}

void appendKeyField(std::string& key, std::string_view text) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
}

std::vector<CompiledDomain> compileDomains(const fe::RlsConfig& config, LimitIds& ids,
                                           PolicySet& headerPolicies,
                                           std::vector<CompiledPolicy>& headerCompiled) {
    std::vector<CompiledDomain> out(config.domains.size());
    for (std::size_t d = 0; d < config.domains.size(); ++d) {
        const fe::DomainConfig& domain = config.domains[d];
        CompiledDomain& c = out[d];
        c.config = &domain;
        c.root.statsKey = domain.domain;
        appendKeyField(c.root.keyPrefix, domain.domain);
        c.root.children.resize(domain.descriptors.size());
        for (std::size_t i = 0; i < domain.descriptors.size(); ++i) {
            const fe::DescriptorNode& node = domain.descriptors[i];
            compileNode(node, c.root, ids, headerPolicies, headerCompiled, c.root.children[i]);
            c.root.byComposite.emplace(node.compositeKey, i);
            if (node.wildcard) c.root.wildcards.push_back(i);
        }
    }
    return out;
}

void matchDescriptor(const CompiledDomain& domain, std::span<const RlsEntry> entries, Match& out) {
    out.path.clear();
    out.rule = nullptr;
    const CompiledNode* node = &domain.root;
    std::string composite;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const RlsEntry& e = entries[i];
        composite.assign(e.key);
        composite += '_';
        composite += e.value;
        const CompiledNode* next = nullptr;
        if (auto it = node->byComposite.find(composite); it != node->byComposite.end()) {
            next = &node->children[it->second];
        } else {
            for (std::size_t w : node->wildcards) {
                if (fe::wildcardMatches(node->children[w].node->compositeKey, composite)) {
                    next = &node->children[w];
                    break;
                }
            }
            if (!next) {
                if (auto k = node->byComposite.find(e.key); k != node->byComposite.end()) {
                    next = &node->children[k->second];
                }
            }
        }
        if (!next) return;  // nothing matches this entry: no limit
        out.path.push_back(next);
        // A rule applies only where the request ends: deeper requests than rules get none.
        if (i + 1 == entries.size()) {
            if (next->node->rule) out.rule = next;
            return;
        }
        if (next->children.empty()) return;
        node = next;
    }
}

}  // namespace ratelab::serve::rls
