// Redis URLs: the policy file's grammar (parseRedisUrl) and the store's (parseEndpoint), and the
// "host:port" of cluster replies. A URL both accept names the same server, and the name logs and
// errors show never depends on the password.

#include "fuzz_check.h"
#include "ratelab/redis_url.h"
#include "redis/endpoint.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_redis_url";
    const std::string_view text = fuzz::text(data, size);
    std::string why;
    const std::optional<RedisEndpoint> policyUrl = parseRedisUrl(text, &why);
    fuzz::require(policyUrl.has_value() == why.empty(), kHarness,
                  "a refusal without a reason, or a reason without a refusal");
    redis::Endpoint endpoint;
    std::string error;
    const bool storeUrl = redis::parseEndpoint(text, &endpoint, &error);
    // name() is what logs and errors show: it is the same whatever the password is.
    if (storeUrl && !endpoint.password.empty()) {
        redis::Endpoint other = endpoint;
        other.password = "not-" + endpoint.password;
        fuzz::require(endpoint.name() == other.name(), kHarness,
                      "an endpoint's name depends on its password");
    }
    if (policyUrl && storeUrl) {
        fuzz::require(policyUrl->database == endpoint.db, kHarness,
                      "the two grammars read another database");
        if (endpoint.isUnix()) {
            fuzz::require(policyUrl->unixPath == endpoint.path, kHarness,
                          "the two grammars read another socket path");
        } else {
            fuzz::require(policyUrl->host == endpoint.host && policyUrl->port == endpoint.port,
                          kHarness, "the two grammars read another host or port");
        }
    }
    std::string host;
    int port = 0;
    if (redis::parseHostPort(text, &host, &port)) {
        fuzz::require(port >= 0 && port <= 65535, kHarness, "a port out of range");
    }
    return 0;
}
