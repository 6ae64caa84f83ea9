#pragma once

// What a bucket key says its client is: the prefixes of the keys the engine derives (written by
// engine/src/identity/key_deriver.cpp), for tools that group clients by kind, such as a
// scenario fitted to a log. What follows a credential's prefix is its SHA-256, never the
// credential.

#include <string_view>

namespace ratelab {

inline constexpr std::string_view kAddressKeyPrefix = "ip:";          ///< "ip:198.51.100.7"
inline constexpr std::string_view kAuthorizationKeyPrefix = "auth:";  ///< "auth:<sha256>"
inline constexpr std::string_view kPrincipalKeyPrefix = "princ:";     ///< "princ:<sha256>"
inline constexpr std::string_view kHeaderKeyPrefix = "hdr:";          ///< an API-key header's
/// The one key of the requests whose key part is missing, under key.when_missing "shared".
inline constexpr std::string_view kMissingPartKey = "missing";

}  // namespace ratelab
