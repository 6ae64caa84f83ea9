// Redis URLs (ratelab/redis_url.h, the one grammar of policy files, --store and makeRedisStore:
// standalone, unix socket and Sentinel)
// and the "host:port" node addresses of Cluster replies. A refusal says why and never repeats
// the password; an accepted URL names its server without the credentials, its redacted form
// hides the password and parses back to the same server; a node address has a port in range.

#include "fuzz/fuzz_check.h"
#include "ratelab/redis_url.h"
#include "redis/endpoint.h"

using namespace ratelab;

namespace {

constexpr const char* kHarness = "fuzz_redis_url";

bool sameServer(const RedisEndpoint& a, const RedisEndpoint& b) {
    return a.host == b.host && a.port == b.port && a.unixPath == b.unixPath &&
           a.database == b.database && a.user == b.user && a.masterName == b.masterName &&
           a.sentinels == b.sentinels;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    const std::string_view text = fuzz::text(data, size);
    std::string why;
    const std::optional<RedisEndpoint> endpoint = parseRedisUrl(text, &why);
    fuzz::require(endpoint.has_value() == why.empty(), kHarness,
                  "a refusal without a reason, or a reason without a refusal");
    if (endpoint) {
        // What logs and errors show is the same whatever the password is.
        RedisEndpoint other = *endpoint;
        other.password = "not-" + endpoint->password;
        fuzz::require(endpoint->name() == other.name(), kHarness,
                      "an endpoint's name depends on its password");
        fuzz::require(endpoint->isSentinel() == !endpoint->sentinels.empty(), kHarness,
                      "a Sentinel URL without sentinels, or sentinels without a master's name");

        const std::string redacted = redactRedisUrl(text);
        std::string whyRedacted;
        const std::optional<RedisEndpoint> again = parseRedisUrl(redacted, &whyRedacted);
        fuzz::require(again.has_value(), kHarness, "the redacted form of a URL does not parse");
        fuzz::require(sameServer(*again, *endpoint), kHarness,
                      "the redacted form of a URL names another server");
        // Where the password was, the redacted form holds "***" and nothing else of it.
        fuzz::require(again->password == (endpoint->password.empty() ? "" : "***"), kHarness,
                      "the redacted URL shows the password, or adds or removes one");
    }

    std::string host;
    int port = 0;
    if (redis::parseHostPort(text, &host, &port)) {
        fuzz::require(port >= 1 && port <= 65535, kHarness, "a node address with a port out of range");
        fuzz::require(!host.empty(), kHarness, "a node address without a host");
    }
    return 0;
}
