// The full request path: derive the key (SHA-256 of the Authorization header included), apply
// the peer's bucket budget, decide, and render the headers into a reused Verdict; against the
// same work done the obvious way around the naive limiter. Also the identity pieces on their
// own: SHA-256 through every OpenSSL interface there is for it, key derivation, address
// formatting.

// The deprecated SHA256_* calls are measured, never used by the engine: they are the floor
// (the CPU's SHA instructions without EVP's provider dispatch) the EVP figures are read against.
#define OPENSSL_SUPPRESS_DEPRECATED

#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/hex.h"
#include "identity/key_deriver.h"
#include "identity/sha256.h"
#include "bench/naive_limiter.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"
#include "bench/summary.h"

namespace ratelab::bench {
namespace {

// 10,000 clients, each an IPv4 peer with its own bearer token, visited round-robin every
// 100 us of virtual time: each comes back after 1 s, when the policy (burst 20, 10 per second)
// has refilled it, so the steady state is the pass path every service runs most.
constexpr std::size_t kClients = 10'000;
constexpr Nanos kStep = 100 * kNanosPerMicro;

struct Client {
    IpAddress peer;
    std::string authorization;
    std::array<Header, 4> headers;
};

struct Clients {
    std::vector<Client> list;
    Clients() {
        list.resize(kClients);
        for (std::size_t i = 0; i < kClients; ++i) {
            Client& c = list[i];
            c.peer = IpAddress::fromV4(0xC6120000u + static_cast<std::uint32_t>(i));  // 198.18/15
            c.authorization = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLSIsImlhdCI6MTcwMH0." +
                              std::to_string(1'000'000 + i * 7919);
        }
        for (Client& c : list) {
            c.headers = {Header{"host", "api.example"}, Header{"user-agent", "bench/1.0"},
                         Header{"accept", "application/json"},
                         Header{"authorization", c.authorization}};
        }
    }
    static const Clients& get() {
        static const Clients clients;
        return clients;
    }
};

PolicySet apiPolicy() {
    PolicySet set;
    Policy p;
    p.name = "api";
    p.capacity = 20;
    p.refillPerSecond = 10.0;
    p.headers = HeaderStyle::Ietf;
    set.policies.push_back(p);
    return set;
}

RequestView viewOf(const Client& c) {
    RequestView r;
    r.method = "GET";
    r.path = "/api/items";
    r.headers = c.headers;
    r.peer = &c.peer;
    return r;
}

void BM_FullPath_Ratelab(benchmark::State& state) {
    const Clients& clients = Clients::get();
    MemoryStoreOptions options;
    options.hashSeed = 1;
    Limiter limiter(apiPolicy(), makeMemoryStore(options));
    Verdict verdict;
    Nanos now = kNanosPerSecond;
    std::size_t i = 0;
    std::int64_t refused = 0;
    for (auto _ : state) {
        const Client& c = clients.list[i];
        if (++i == kClients) i = 0;
        limiter.decide(viewOf(c), now += kStep, verdict);
        refused += verdict.allowed ? 0 : 1;
        benchmark::DoNotOptimize(verdict.headers.data());
    }
    if (refused != 0) state.SkipWithError("the steady state should pass every request");
    state.SetItemsProcessed(state.iterations());
}

// The same request handled the obvious way: the key is "auth:" + hex(SHA-256) built in a fresh
// std::string by a one-shot EVP_Digest (the digest looked up on every call), the peer printed
// with inet_ntop, the naive limiter consulted, and the two header lines built with
// std::to_string into a fresh vector. No budget: the naive limiter has none.
struct NaiveVerdict {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
};

NaiveVerdict naiveDecide(NaiveLimiter& limiter, const RequestView& request, Nanos now) {
    std::string authorization;
    for (const Header& h : request.headers) {
        if (h.name == "authorization") authorization = std::string(h.value);
    }
    std::string key;
    if (!authorization.empty()) {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        EVP_Digest(authorization.data(), authorization.size(), digest, &length, EVP_sha256(),
                   nullptr);
        static const char* const kHex = "0123456789abcdef";
        key = "auth:";
        for (unsigned k = 0; k < length; ++k) {
            key += kHex[digest[k] >> 4];
            key += kHex[digest[k] & 0xf];
        }
    } else {
        char text[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, request.peer->bytes().data(), text, sizeof text);
        key = std::string("ip:") + text;
    }
    NaiveVerdict v;
    const bool allowed = limiter.check(key, now);
    v.status = allowed ? 200 : 429;
    v.headers.emplace_back("RateLimit-Policy", "\"api\";q=20;w=2");
    v.headers.emplace_back("RateLimit", "\"api\";r=" + std::to_string(allowed ? 19 : 0) + ";t=1");
    return v;
}

void BM_FullPath_Naive(benchmark::State& state) {
    const Clients& clients = Clients::get();
    NaiveLimiter limiter(20, 10.0);
    Nanos now = kNanosPerSecond;
    std::size_t i = 0;
    for (auto _ : state) {
        const Client& c = clients.list[i];
        if (++i == kClients) i = 0;
        NaiveVerdict v = naiveDecide(limiter, viewOf(c), now += kStep);
        benchmark::DoNotOptimize(v.headers.data());
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_FullPath_Ratelab);
BENCHMARK(BM_FullPath_Naive);

// --- the identity pieces ----------------------------------------------------------------------

const std::string& sampleToken() {
    static const std::string token = Clients::get().list[0].authorization;
    return token;
}

// The engine's way (identity/sha256.h): the fetched provider's digest functions on a context
// made once per thread, re-initialised per digest; hex included.
void BM_Sha256_Engine(benchmark::State& state) {
    char hex[identity::kSha256HexLength];
    const std::string& token = sampleToken();  // builds the client set outside the timing
    for (auto _ : state) {
        identity::sha256Hex(token, hex);
        benchmark::DoNotOptimize(hex);
    }
}

// The engine's fallback route, where the provider's functions cannot be had: EVP on a reused
// context (EVP_DigestInit_ex2 with the fetched digest per hash); hex included.
void BM_Sha256_EngineEvpRoute(benchmark::State& state) {
    char hex[identity::kSha256HexLength];
    const std::string& token = sampleToken();
    identity::Sha256Context context(identity::Sha256Route::Evp);
    for (auto _ : state) {
        unsigned char digest[32];
        context.start();
        context.update(token.data(), token.size());
        context.finish(digest);
        writeHex(digest, sizeof digest, hex);
        benchmark::DoNotOptimize(hex);
    }
}

// One-shot EVP_Digest with EVP_sha256(): OpenSSL 3 fetches the implementation on every call.
void BM_Sha256_EvpDigestImplicitFetch(benchmark::State& state) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    const std::string& token = sampleToken();
    for (auto _ : state) {
        EVP_Digest(token.data(), token.size(), digest, &length, EVP_sha256(), nullptr);
        benchmark::DoNotOptimize(digest);
    }
}

// Pre-fetched digest, but a context allocated and freed per call.
void BM_Sha256_EvpContextPerCall(benchmark::State& state) {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    const std::string& token = sampleToken();
    for (auto _ : state) {
        EVP_MD_CTX* context = EVP_MD_CTX_new();
        EVP_DigestInit_ex(context, md, nullptr);
        EVP_DigestUpdate(context, token.data(), token.size());
        EVP_DigestFinal_ex(context, digest, &length);
        EVP_MD_CTX_free(context);
        benchmark::DoNotOptimize(digest);
    }
    EVP_MD_free(md);
}

// One context, re-initialised with EVP_DigestInit_ex2 and no digest: "the one it had".
void BM_Sha256_EvpInitEx2Reuse(benchmark::State& state) {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    EVP_DigestInit_ex2(context, md, nullptr);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    const std::string& token = sampleToken();
    for (auto _ : state) {
        EVP_DigestInit_ex2(context, nullptr, nullptr);
        EVP_DigestUpdate(context, token.data(), token.size());
        EVP_DigestFinal_ex(context, digest, &length);
        benchmark::DoNotOptimize(digest);
    }
    EVP_MD_CTX_free(context);
    EVP_MD_free(md);
}

// A context initialised once and copied into the working one per hash (EVP_MD_CTX_copy_ex).
void BM_Sha256_EvpCopyFromInitialised(benchmark::State& state) {
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    EVP_MD_CTX* initialised = EVP_MD_CTX_new();
    EVP_DigestInit_ex(initialised, md, nullptr);
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    const std::string& token = sampleToken();
    for (auto _ : state) {
        EVP_MD_CTX_copy_ex(context, initialised);
        EVP_DigestUpdate(context, token.data(), token.size());
        EVP_DigestFinal_ex(context, digest, &length);
        benchmark::DoNotOptimize(digest);
    }
    EVP_MD_CTX_free(context);
    EVP_MD_CTX_free(initialised);
    EVP_MD_free(md);
}

// OpenSSL 3's one-call digest by name.
void BM_Sha256_EvpQDigest(benchmark::State& state) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    std::size_t length = 0;
    const std::string& token = sampleToken();
    for (auto _ : state) {
        EVP_Q_digest(nullptr, "SHA256", nullptr, token.data(), token.size(), digest, &length);
        benchmark::DoNotOptimize(digest);
    }
}

// The deprecated low-level calls: the same SHA-NI compression, no provider in between.
void BM_Sha256_LowLevel(benchmark::State& state) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    const std::string& token = sampleToken();
    for (auto _ : state) {
        SHA256_CTX context;
        SHA256_Init(&context);
        SHA256_Update(&context, token.data(), token.size());
        SHA256_Final(digest, &context);
        benchmark::DoNotOptimize(digest);
    }
}

BENCHMARK(BM_Sha256_Engine);
BENCHMARK(BM_Sha256_EngineEvpRoute);
BENCHMARK(BM_Sha256_EvpDigestImplicitFetch);
BENCHMARK(BM_Sha256_EvpContextPerCall);
BENCHMARK(BM_Sha256_EvpInitEx2Reuse);
BENCHMARK(BM_Sha256_EvpCopyFromInitialised);
BENCHMARK(BM_Sha256_EvpQDigest);
BENCHMARK(BM_Sha256_LowLevel);

void deriveLoop(benchmark::State& state, bool withAuthorization, bool v6) {
    const Clients& clients = Clients::get();
    identity::KeyDeriver deriver(KeyConfig{}, BudgetConfig{});
    identity::DerivedKey out;
    TrustedProxies proxies;
    IpAddress v6Peer = *IpAddress::parse("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    std::size_t i = 0;
    for (auto _ : state) {
        const Client& c = clients.list[i];
        if (++i == kClients) i = 0;
        RequestView view = viewOf(c);
        if (!withAuthorization) view.headers = view.headers.first(3);
        if (v6) view.peer = &v6Peer;
        identity::RequestContext context(view, proxies);
        benchmark::DoNotOptimize(deriver.derive(context, out));
    }
}

void BM_Derive_AuthorizationV4(benchmark::State& state) {
    deriveLoop(state, true, false);
}
void BM_Derive_PeerV4(benchmark::State& state) {
    deriveLoop(state, false, false);
}
void BM_Derive_PeerV6(benchmark::State& state) {
    deriveLoop(state, false, true);
}
BENCHMARK(BM_Derive_AuthorizationV4);
BENCHMARK(BM_Derive_PeerV4);
BENCHMARK(BM_Derive_PeerV6);

void BM_Format_V6(benchmark::State& state) {
    IpAddress a = *IpAddress::parse("2001:db8:1:2:aaaa:0:0:dddd");
    char out[64];
    for (auto _ : state)
        benchmark::DoNotOptimize(a.format(out));
}
void BM_Format_V4(benchmark::State& state) {
    IpAddress a = *IpAddress::parse("198.51.100.107");
    char out[64];
    for (auto _ : state)
        benchmark::DoNotOptimize(a.format(out));
}
BENCHMARK(BM_Format_V6);
BENCHMARK(BM_Format_V4);

[[maybe_unused]] const bool registered = [] {
    registerSummary({"full_path_ns",
                     {"BM_FullPath_Ratelab"},
                     [](const Results& r) { return nanos(r, "BM_FullPath_Ratelab"); },
                     0,
                     20});
    registerSummary({"full_path_ratio",
                     {"BM_FullPath_Naive", "BM_FullPath_Ratelab"},
                     [](const Results& r) {
                         return nanos(r, "BM_FullPath_Naive") / nanos(r, "BM_FullPath_Ratelab");
                     },
                     1,
                     21});
    registerSummary({"sha256_ns",
                     {"BM_Sha256_Engine"},
                     [](const Results& r) { return nanos(r, "BM_Sha256_Engine"); },
                     0,
                     22});
    registerSummary({"sha256_lowlevel_ns",
                     {"BM_Sha256_LowLevel"},
                     [](const Results& r) { return nanos(r, "BM_Sha256_LowLevel"); },
                     0,
                     23});
    return true;
}();

}  // namespace
}  // namespace ratelab::bench
