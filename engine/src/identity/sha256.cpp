#include "identity/sha256.h"

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include <charconv>
#include <cstring>
#include <new>

#include "support/hex.h"

namespace ratelab::identity {

namespace {

const EVP_MD* sha256Digest() {
    // Fetched once and kept for the life of the process (never freed: threads may still hash
    // during static destruction). Holding it keeps its provider loaded, whose functions
    // ProviderSha256 calls.
    static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return md;
}

// The digest functions of the provider behind sha256Digest(), as provider-digest(7) names
// them, found once through OSSL_PROVIDER_query_operation.
struct ProviderSha256 {
    void* providerContext = nullptr;
    OSSL_FUNC_digest_newctx_fn* newContext = nullptr;
    OSSL_FUNC_digest_freectx_fn* freeContext = nullptr;
    OSSL_FUNC_digest_init_fn* init = nullptr;
    OSSL_FUNC_digest_update_fn* update = nullptr;
    OSSL_FUNC_digest_final_fn* finalize = nullptr;

    bool complete() const { return newContext && freeContext && init && update && finalize; }

    // Whether the functions hash "abc" to FIPS 180-2's answer.
    bool passesKnownAnswer() const {
        static constexpr unsigned char kAbc[32] = {
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
            0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
            0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
        void* context = newContext(providerContext);
        if (!context) return false;
        unsigned char digest[32];
        std::size_t length = 0;
        const bool ok = init(context, nullptr) == 1 &&
                        update(context, reinterpret_cast<const unsigned char*>("abc"), 3) == 1 &&
                        finalize(context, digest, &length, sizeof digest) == 1 && length == 32 &&
                        std::memcmp(digest, kAbc, 32) == 0;
        freeContext(context);
        return ok;
    }
};

// Finds the fetched digest's implementation among its provider's digests: the one entry that
// answers to the fetched digest's name. Anything unexpected (no provider, no entry, several
// entries, a missing function, a wrong answer) leaves the result incomplete, and EVP is used.
ProviderSha256 findProviderSha256() {
    ProviderSha256 found;
    const EVP_MD* md = sha256Digest();
    const OSSL_PROVIDER* provider = md ? EVP_MD_get0_provider(md) : nullptr;
    if (!provider) return found;
    int noStore = 0;
    const OSSL_ALGORITHM* algorithms =
        OSSL_PROVIDER_query_operation(provider, OSSL_OP_DIGEST, &noStore);
    if (!algorithms) return found;
    const OSSL_DISPATCH* implementation = nullptr;
    int matches = 0;
    for (const OSSL_ALGORITHM* a = algorithms; a->algorithm_names != nullptr; ++a) {
        // "SHA2-256:SHA-256:SHA256:2.16.840.1.101.3.4.2.1": any one name identifies it.
        const std::string_view names(a->algorithm_names);
        const std::string_view first = names.substr(0, names.find(':'));
        char name[64];
        if (first.size() >= sizeof name) continue;
        std::memcpy(name, first.data(), first.size());
        name[first.size()] = '\0';
        if (EVP_MD_is_a(md, name)) {
            implementation = a->implementation;
            ++matches;
        }
    }
    if (matches == 1) {
        for (const OSSL_DISPATCH* f = implementation; f->function_id != 0; ++f) {
            switch (f->function_id) {
                case OSSL_FUNC_DIGEST_NEWCTX:
                    found.newContext = OSSL_FUNC_digest_newctx(f);
                    break;
                case OSSL_FUNC_DIGEST_FREECTX:
                    found.freeContext = OSSL_FUNC_digest_freectx(f);
                    break;
                case OSSL_FUNC_DIGEST_INIT:
                    found.init = OSSL_FUNC_digest_init(f);
                    break;
                case OSSL_FUNC_DIGEST_UPDATE:
                    found.update = OSSL_FUNC_digest_update(f);
                    break;
                case OSSL_FUNC_DIGEST_FINAL:
                    found.finalize = OSSL_FUNC_digest_final(f);
                    break;
                default:
                    break;
            }
        }
        found.providerContext = OSSL_PROVIDER_get0_provider_ctx(provider);
    }
    // The function pointers stay valid after this: they are the provider's code, loaded while
    // sha256Digest() holds it.
    OSSL_PROVIDER_unquery_operation(provider, OSSL_OP_DIGEST, algorithms);
    if (!found.complete() || !found.passesKnownAnswer()) found = ProviderSha256{};
    return found;
}

const ProviderSha256& providerSha256() {
    static const ProviderSha256 functions = findProviderSha256();
    return functions;
}

Sha256Context& threadContext() {
    thread_local Sha256Context context;
    return context;
}

}  // namespace

Sha256Route sha256Route() {
    return providerSha256().complete() ? Sha256Route::Provider : Sha256Route::Evp;
}

Sha256Context::Sha256Context(Sha256Route route) {
    const ProviderSha256& functions = providerSha256();
    if (route == Sha256Route::Provider && functions.complete()) {
        provider_ = functions.newContext(functions.providerContext);
        if (provider_) return;
    }
    evp_ = EVP_MD_CTX_new();
}

Sha256Context::~Sha256Context() {
    if (provider_) providerSha256().freeContext(provider_);
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(evp_));
}

bool Sha256Context::start() {
    if (provider_) return providerSha256().init(provider_, nullptr) == 1;
    const EVP_MD* md = sha256Digest();
    return evp_ && md && EVP_DigestInit_ex2(static_cast<EVP_MD_CTX*>(evp_), md, nullptr) == 1;
}

bool Sha256Context::update(const void* data, std::size_t size) {
    if (provider_) {
        return providerSha256().update(provider_, static_cast<const unsigned char*>(data), size) ==
               1;
    }
    return evp_ && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(evp_), data, size) == 1;
}

bool Sha256Context::finish(unsigned char* digest) {
    if (provider_) {
        std::size_t length = 0;
        return providerSha256().finalize(provider_, digest, &length, 32) == 1 && length == 32;
    }
    unsigned int length = 0;
    return evp_ && EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(evp_), digest, &length) == 1 &&
           length == 32;
}

namespace {

bool finishHex(Sha256Context& context, char* out) {
    unsigned char digest[32];
    if (!context.finish(digest)) return false;
    writeHex(digest, sizeof digest, out);
    return true;
}

}  // namespace

bool sha256Hex(std::string_view data, char* out) {
    Sha256Context& context = threadContext();
    return context.start() && context.update(data.data(), data.size()) &&
           finishHex(context, out);
}

namespace {
// The builders' own per-thread context, apart from sha256Hex's so a one-shot hash taken while
// a builder is live cannot disturb it.
thread_local bool builderContextBusy = false;

Sha256Context& builderContext() {
    thread_local Sha256Context context;
    return context;
}
}  // namespace

Sha256PartsHasher::Sha256PartsHasher() : context_(nullptr), ok_(false), owned_(false) {
    if (!builderContextBusy) {
        context_ = &builderContext();
        builderContextBusy = true;
    } else {
        context_ = new (std::nothrow) Sha256Context();
        owned_ = true;
    }
    ok_ = context_ != nullptr && context_->start();
}

Sha256PartsHasher::~Sha256PartsHasher() {
    if (owned_) {
        delete context_;
    } else {
        builderContextBusy = false;
    }
}

void Sha256PartsHasher::addPart(std::string_view part) {
    if (!ok_) return;
    char length[24];
    auto [end, ec] = std::to_chars(length, length + sizeof length - 1, part.size());
    if (ec != std::errc()) {
        ok_ = false;
        return;
    }
    *end++ = ':';
    ok_ = context_->update(length, static_cast<std::size_t>(end - length)) &&
          context_->update(part.data(), part.size());
}

bool Sha256PartsHasher::finishHex(char* out) {
    if (!ok_) return false;
    ok_ = false;  // a finished digest takes no more parts
    return identity::finishHex(*context_, out);
}

bool sha256HexOfParts(std::span<const std::string_view> parts, char* out) {
    Sha256PartsHasher hasher;
    for (std::string_view part : parts)
        hasher.addPart(part);
    return hasher.finishHex(out);
}

}  // namespace ratelab::identity
