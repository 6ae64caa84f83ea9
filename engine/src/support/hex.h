#pragma once

// Lowercase hexadecimal, the one spelling of bytes as text in keys (SHA-256 digests), key
// names, script ids, reports, event key hashes and simulated tokens. The digest of a
// credential is written on every request that carries one, so the bytes go 16 at a time
// through SSE2 (part of every x86-64 CPU) where it is there, with a table of digit pairs
// elsewhere (docs/BENCHMARKS.md, "Why the code is as it is").

#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ratelab {

#if defined(__SSE2__)
namespace hex_detail {

/// The digits of the 16 nibbles in `nibbles` (one per byte, 0-15): '0' + n, and 39 more
/// ('a' - '0' - 10) for the nibbles past 9.
inline __m128i digits(__m128i nibbles) {
    const __m128i letters =
        _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    return _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
}
inline __m128i highNibbles(__m128i v) {
    return _mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi8(0x0f));
}
inline __m128i lowNibbles(__m128i v) {
    return _mm_and_si128(v, _mm_set1_epi8(0x0f));
}

}  // namespace hex_detail
#endif

/// Writes the 2 * n lowercase hex digits of `bytes` to `out` (no terminator).
inline void writeHex(const unsigned char* bytes, std::size_t n, char* out) {
    std::size_t i = 0;
#if defined(__SSE2__)
    using namespace hex_detail;
    for (; i + 16 <= n; i += 16, out += 32) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i));
        const __m128i high = highNibbles(v);
        const __m128i low = lowNibbles(v);
        // Each byte's high digit comes first.
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out), digits(_mm_unpacklo_epi8(high, low)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16),
                         digits(_mm_unpackhi_epi8(high, low)));
    }
#endif
    static constexpr char kDigits[] = "0123456789abcdef";
    for (const unsigned char* b = bytes + i; b != bytes + n; ++b) {
        *out++ = kDigits[*b >> 4];
        *out++ = kDigits[*b & 15];
    }
}

/// Writes the 16 lowercase hex digits of `value`, most significant first, to `out`.
inline void writeHex64(std::uint64_t value, char* out) {
#if defined(__SSE2__)
    using namespace hex_detail;
    // The most significant byte first in memory, so its digits come first.
    const __m128i v = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(value)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                     digits(_mm_unpacklo_epi8(highNibbles(v), lowNibbles(v))));
#else
    unsigned char bytes[8];
    for (int i = 7; i >= 0; --i) {
        bytes[i] = static_cast<unsigned char>(value);
        value >>= 8;
    }
    writeHex(bytes, sizeof bytes, out);
#endif
}

}  // namespace ratelab
