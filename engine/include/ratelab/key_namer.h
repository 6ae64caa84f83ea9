#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ratelab {

/// Names bucket keys where they leave the process (log lines), so that lines about one client
/// can be correlated without revealing the client: a bucket key holds an address, or the hash of
/// a credential that could be guessed offline, and a plain or seeded fast hash of either can be
/// reversed by trying every candidate. The name is HMAC-SHA-256 (OpenSSL) under a secret,
/// truncated to kKeyNameLength hex digits. Thread-safe.
class KeyNamer {
public:
    static constexpr std::size_t kKeyNameLength = 16;

    /// `secret` is the HMAC key. Empty picks 32 random bytes: names then differ between
    /// processes; replicas that want correlated logs share a secret (at least 16 bytes).
    explicit KeyNamer(std::string secret = {});

    /// Writes the name of `key` into `out` (exactly kKeyNameLength bytes, no terminator).
    void name(std::string_view key, char* out) const;
    std::string name(std::string_view key) const;

private:
    std::string secret_;
};

}  // namespace ratelab
