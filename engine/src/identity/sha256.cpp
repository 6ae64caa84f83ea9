#include "identity/sha256.h"

#include <openssl/evp.h>

#include <charconv>
#include <cstring>
#include <memory>

namespace ratelab::identity {

namespace {

const EVP_MD* sha256Digest() {
    // Fetched once and kept for the life of the process (never freed: threads may still hash
    // during static destruction).
    static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return md;
}

struct ContextDeleter {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

// A thread's contexts: one initialised for SHA-256 once, and one that each digest starts as a
// copy of it. OpenSSL 3.0 builds a new provider context on every EVP_DigestInit_ex (an
// allocation, a free and a cleanse); EVP_MD_CTX_copy_ex from an initialised context costs less
// (docs/BENCHMARKS.md, "SHA-256", has every interface measured).
class ThreadContexts {
public:
    ThreadContexts() : initialised_(EVP_MD_CTX_new()), work_(EVP_MD_CTX_new()) {
        const EVP_MD* md = sha256Digest();
        ready_ = initialised_ && work_ && md != nullptr &&
                 EVP_DigestInit_ex(initialised_.get(), md, nullptr) == 1;
    }
    /// The working context, started on a new digest (whatever a failed one left in it is
    /// overwritten); null when OpenSSL fails.
    EVP_MD_CTX* start() {
        if (!ready_ || EVP_MD_CTX_copy_ex(work_.get(), initialised_.get()) != 1) return nullptr;
        return work_.get();
    }

private:
    std::unique_ptr<EVP_MD_CTX, ContextDeleter> initialised_;
    std::unique_ptr<EVP_MD_CTX, ContextDeleter> work_;
    bool ready_ = false;
};

// Two hex characters per byte value, so encoding takes one 16-bit copy per byte.
struct HexPairs {
    char pairs[256][2];
    constexpr HexPairs() : pairs() {
        constexpr char kHex[] = "0123456789abcdef";
        for (int b = 0; b < 256; ++b) {
            pairs[b][0] = kHex[b >> 4];
            pairs[b][1] = kHex[b & 0xf];
        }
    }
};
constexpr HexPairs kHexPairs;

void toHex(const unsigned char* digest, char* out) {
    for (int k = 0; k < 32; ++k) std::memcpy(out + 2 * k, kHexPairs.pairs[digest[k]], 2);
}

// Starts a digest on this thread's context. The context is started afresh on every call, so a
// failure half-way through one hash never leaks into the next.
EVP_MD_CTX* begin() {
    thread_local ThreadContexts contexts;
    return contexts.start();
}

bool finish(EVP_MD_CTX* context, char* out) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context, digest, &length) != 1 || length != 32) return false;
    toHex(digest, out);
    return true;
}

}  // namespace

bool sha256Hex(std::string_view data, char* out) {
    EVP_MD_CTX* context = begin();
    if (context == nullptr) return false;
    if (EVP_DigestUpdate(context, data.data(), data.size()) != 1) return false;
    return finish(context, out);
}

namespace {
// The builders' own per-thread context, apart from sha256Hex's so a one-shot hash taken while
// a builder is live cannot disturb it.
thread_local bool builderContextBusy = false;
}  // namespace

Sha256PartsHasher::Sha256PartsHasher() : context_(nullptr), ok_(false), owned_(false) {
    if (!builderContextBusy) {
        thread_local ThreadContexts contexts;
        context_ = contexts.start();
        builderContextBusy = context_ != nullptr;
        ok_ = context_ != nullptr;
        return;
    }
    context_ = EVP_MD_CTX_new();
    owned_ = context_ != nullptr;
    const EVP_MD* md = sha256Digest();
    ok_ = context_ != nullptr && md != nullptr && EVP_DigestInit_ex(context_, md, nullptr) == 1;
}

Sha256PartsHasher::~Sha256PartsHasher() {
    if (owned_) {
        EVP_MD_CTX_free(context_);
    } else if (context_ != nullptr) {
        builderContextBusy = false;
    }
}

void Sha256PartsHasher::addPart(std::string_view part) {
    if (!ok_) return;
    EVP_MD_CTX* context = context_;
    char length[24];
    auto [end, ec] = std::to_chars(length, length + sizeof length - 1, part.size());
    if (ec != std::errc()) {
        ok_ = false;
        return;
    }
    *end++ = ':';
    ok_ = EVP_DigestUpdate(context, length, static_cast<std::size_t>(end - length)) == 1 &&
          EVP_DigestUpdate(context, part.data(), part.size()) == 1;
}

bool Sha256PartsHasher::finishHex(char* out) {
    if (!ok_) return false;
    ok_ = false;  // a finished digest takes no more parts
    return finish(context_, out);
}

bool sha256HexOfParts(std::span<const std::string_view> parts, char* out) {
    Sha256PartsHasher hasher;
    for (std::string_view part : parts)
        hasher.addPart(part);
    return hasher.finishHex(out);
}

}  // namespace ratelab::identity
