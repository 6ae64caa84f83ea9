#pragma once

// The configuration as the decider runs it: each domain's descriptor tree indexed for matching,
// each limit compiled to an engine Limit with its store id, and the matching walk itself
// (envoyproxy/ratelimit's, entry by entry: exact value, then wildcards in file order, then the
// key alone). Private to app/serve/rls.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/envoy/rls_config.h"
#include "policy/compiled_policy.h"
#include "ratelab/limit.h"
#include "ratelab/policy.h"
#include "serve/rls/rls_types.h"

namespace ratelab::serve::rls {

/// Store limit ids by limit numbers, shared by a decider and the ones reloads make from it: the
/// same numbers always get the same id, so an unchanged rule finds its buckets. Ids are never
/// reused. Thread-safe.
class LimitIds {
public:
    explicit LimitIds(std::uint32_t first) : next_(first) {}
    std::uint32_t idOf(const Limit& limit);

private:
    std::mutex mutex_;
    std::vector<std::pair<Limit, std::uint32_t>> ids_;
    std::uint32_t next_;
};

struct CompiledLimit {
    const formats::envoy::RateLimitSpec* spec = nullptr;
    Limit limit;
    std::uint32_t limitId = 0;
    /// Part of the store's key names ("rls.fixed_window.10.60s"): the numbers, not the rule,
    /// so that Redis keys survive a reload as the ids do.
    std::string limitName;
    RlsLimit answer;  ///< current_limit in statuses
    /// The original's window (no ratelab block): the engine's fixed window aligned on the
    /// calendar, its unit from the Unix epoch (`limit.align`), answered in whole seconds.
    bool calendar = false;
    std::size_t headerPolicy = 0;                ///< index into the decider's header policies
    std::optional<StoreErrorRule> onStoreError;  ///< the ratelab block's, when it names one
};

struct CompiledNode {
    const formats::envoy::DescriptorNode* node = nullptr;
    /// Every child by composite key (the original's one map: exact values and keys alone).
    std::unordered_map<std::string, std::size_t> byComposite;
    std::vector<std::size_t> wildcards;  ///< children whose composite key has a '*', in order
    std::vector<CompiledNode> children;
    std::vector<CompiledLimit> limits;  ///< empty: no limit here (or unlimited)
    std::string statsKey;               ///< "<domain>.<composite>.<composite>"
    std::string keyPrefix;              ///< the store key's domain and path, length-prefixed
};

struct CompiledDomain {
    const formats::envoy::DomainConfig* config = nullptr;
    CompiledNode root;
};

/// Where a request descriptor led: the node per entry, and the rule node (when the walk ended
/// on a node with a rate limit or unlimited).
struct Match {
    std::vector<const CompiledNode*> path;
    const CompiledNode* rule = nullptr;
};

/// Walks `domain`'s tree with `entries`. Thread-safe.
void matchDescriptor(const CompiledDomain& domain, std::span<const RlsEntry> entries, Match& out);

/// Compiles every domain of `config`, taking limit ids from `ids`; fills `headerPolicies` and
/// `headerCompiled` (one policy per limit, named for the RateLimit fields).
std::vector<CompiledDomain> compileDomains(const formats::envoy::RlsConfig& config, LimitIds& ids,
                                           PolicySet& headerPolicies,
                                           std::vector<CompiledPolicy>& headerCompiled);

/// Appends `text` to a key as "<length>:<text>", so that no value can stand for two fields.
void appendKeyField(std::string& key, std::string_view text);

}  // namespace ratelab::serve::rls
