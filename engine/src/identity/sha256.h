#pragma once

// SHA-256 of credentials on the request path, computed by OpenSSL. EVP's digest calls cost
// about as much again as the hash of an 80-byte token itself (OpenSSL 3.0 allocates, copies
// and cleanses a provider context per digest and dispatches every call through it), so each
// thread drives the implementation of the provider that EVP_MD_fetch chose (the default
// provider, or FIPS where the configuration says so) through OpenSSL's documented provider
// interface (provider-digest(7)): one context per thread, made once and re-initialised per
// digest. Where that cannot be had, EVP does the same work. docs/BENCHMARKS.md ("SHA-256")
// has every interface measured.

#include <cstddef>
#include <span>
#include <string_view>

namespace ratelab::identity {

/// Length of a SHA-256 digest in lowercase hex.
inline constexpr std::size_t kSha256HexLength = 64;

/// How a thread's SHA-256 reaches OpenSSL.
enum class Sha256Route {
    Provider,  ///< the fetched provider's digest functions, called directly
    Evp,       ///< EVP_DigestInit_ex2 / Update / Final on a reused context
};

/// The route this process takes: Provider unless the provider's functions could not be found
/// or failed their known-answer test when first asked for.
Sha256Route sha256Route();

/// One SHA-256 context, reused digest after digest. Not thread-safe.
class Sha256Context {
public:
    explicit Sha256Context(Sha256Route route = sha256Route());
    ~Sha256Context();
    Sha256Context(const Sha256Context&) = delete;
    Sha256Context& operator=(const Sha256Context&) = delete;

    /// Starts a new digest, dropping whatever a previous one left. False when OpenSSL fails.
    bool start();
    bool update(const void* data, std::size_t size);
    /// Finishes the digest into 32 bytes. Call start() before the next one.
    bool finish(unsigned char* digest);

private:
    void* provider_ = nullptr;  // the provider's digest context (Sha256Route::Provider)
    void* evp_ = nullptr;       // an EVP_MD_CTX (Sha256Route::Evp)
};

/// Writes the lowercase hex SHA-256 of `data` into `out` (exactly 64 bytes, no terminator).
/// Returns false only if OpenSSL fails (it does not for SHA-256 short of memory exhaustion).
/// Thread-safe.
bool sha256Hex(std::string_view data, char* out);

/// SHA-256 of a list of parts in an unambiguous encoding: each part is fed as its length in
/// decimal, a ':', then its bytes. Two different lists never produce the same input, whatever
/// bytes the parts hold (a verified principal or attribute may hold any byte, so no separator
/// character could promise that). Not thread-safe; use one per thread at a time (it borrows a
/// per-thread context, and makes its own only when another builder is live).
class Sha256PartsHasher {
public:
    Sha256PartsHasher();
    ~Sha256PartsHasher();
    Sha256PartsHasher(const Sha256PartsHasher&) = delete;
    Sha256PartsHasher& operator=(const Sha256PartsHasher&) = delete;

    void addPart(std::string_view part);
    /// Writes 64 lowercase hex bytes into `out`. Returns false if OpenSSL failed at any step.
    bool finishHex(char* out);

private:
    Sha256Context* context_;
    bool ok_;
    bool owned_;
};

/// One-shot form of Sha256PartsHasher. Thread-safe.
bool sha256HexOfParts(std::span<const std::string_view> parts, char* out);

}  // namespace ratelab::identity
