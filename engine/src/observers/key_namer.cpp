#include "ratelab/key_namer.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <random>

#include "support/hex.h"

namespace ratelab {

KeyNamer::KeyNamer(std::string secret) : secret_(std::move(secret)) {
    if (!secret_.empty()) return;
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) {
        // OpenSSL's generator failing is not expected; the OS one is the next best.
        std::random_device device;
        for (unsigned char& b : bytes)
            b = static_cast<unsigned char>(device());
    }
    secret_.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

void KeyNamer::name(std::string_view key, char* out) const {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
             reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest,
             &length) == nullptr ||
        length < kKeyNameLength / 2) {
        // Never fall back to something weaker than the HMAC: an unnamed key is still private.
        std::memset(out, '0', kKeyNameLength);
        return;
    }
    writeHex(digest, kKeyNameLength / 2, out);
}

std::string KeyNamer::name(std::string_view key) const {
    std::string out(kKeyNameLength, '0');
    name(key, out.data());
    return out;
}

}  // namespace ratelab
