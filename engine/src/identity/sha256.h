#pragma once

// SHA-256 through OpenSSL's EVP interface, tuned for the request path: the digest is fetched
// once per process (OpenSSL 3 otherwise looks the algorithm up in its provider registry on
// every EVP_Digest call) and each thread starts every digest as a copy of a context it
// initialised once, which OpenSSL 3.0 does faster than initialising one.

#include <cstddef>
#include <span>
#include <string_view>

struct evp_md_ctx_st;

namespace ratelab::identity {

/// Length of a SHA-256 digest in lowercase hex.
inline constexpr std::size_t kSha256HexLength = 64;

/// Writes the lowercase hex SHA-256 of `data` into `out` (exactly 64 bytes, no terminator).
/// Returns false only if OpenSSL fails (it does not for SHA-256 short of memory exhaustion).
/// Thread-safe.
bool sha256Hex(std::string_view data, char* out);

/// SHA-256 of a list of parts in an unambiguous encoding: each part is fed as its length in
/// decimal, a ':', then its bytes. Two different lists never produce the same input, whatever
/// bytes the parts hold (a verified principal or attribute may hold any byte, so no separator
/// character could promise that). Not thread-safe; use one per thread at a time (it borrows a
/// per-thread EVP context, and allocates its own only when another builder is live).
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
    evp_md_ctx_st* context_;  // OpenSSL's EVP_MD_CTX
    bool ok_;
    bool owned_;
};

/// One-shot form of Sha256PartsHasher. Thread-safe.
bool sha256HexOfParts(std::span<const std::string_view> parts, char* out);

}  // namespace ratelab::identity
