#pragma once

// Which node of an RLS configuration a descriptor reaches (the service's lookup: exact
// key_value, then wildcards in order, then the key alone; the request's depth must reach a
// node with a limit), for descriptors whose entries are constants or request parts whose value
// the import cannot know (a client address, a header). Private to this folder.

#include <optional>
#include <string>
#include <vector>

#include "formats/envoy/rls_config.h"
#include "formats/import/import_common.h"

namespace ratelab::formats::envoy_ratelimit {

/// A request part a policy keys by.
struct KeyPartSpec {
    enum class Kind : std::uint8_t { Peer, Header };
    Kind kind = Kind::Peer;
    std::string header;  ///< Header
    int ipv4Prefix = 32;
    int ipv6Prefix = 128;
    bool operator==(const KeyPartSpec&) const = default;
};

/// One entry of a descriptor: a constant value, or a request part.
struct DescriptorEntry {
    std::string key;
    std::optional<std::string> value;  ///< the constant; nullopt for a request part
    KeyPartSpec part;                  ///< the request part, when value is nullopt
    std::string what;                  ///< the part for messages: "the client address"
};

/// The node a descriptor reaches, the nodes on the way, and the request parts that key its
/// counter (a share_threshold wildcard's part shares one counter, so it is left out).
struct DescriptorMatch {
    const envoy::DescriptorNode* node = nullptr;
    std::vector<const envoy::DescriptorNode*> path;
    std::vector<KeyPartSpec> parts;
};

/// The node `entries` reaches among `roots`, or nullopt (no limit). Nodes that only some
/// values of a request part reach (an exact value, a partial wildcard) are warned about at
/// their position in file `file` of `log`: a policy cannot match a value.
std::optional<DescriptorMatch> matchDescriptor(const std::vector<envoy::DescriptorNode>& roots,
                                               const std::vector<DescriptorEntry>& entries,
                                               int file, ImportLog& log);

/// The policy `key` object for `parts` (none: one bucket for the route). Every part must be
/// present: a request without one of the headers is not counted (Envoy sends no descriptor).
PolicyJson keyFor(const std::vector<KeyPartSpec>& parts, SourcePos at, ImportLog& log);

}  // namespace ratelab::formats::envoy_ratelimit
