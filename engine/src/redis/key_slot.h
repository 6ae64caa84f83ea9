#pragma once

// Redis Cluster key placement (cluster-spec): CRC16-XMODEM of the key, or of its hash tag, modulo
// 16384.

#include <cstdint>
#include <string_view>

namespace ratelab::redis {

inline constexpr int kClusterSlots = 16384;

/// CRC16-XMODEM: polynomial 0x1021, init 0, no reflection, no final xor ("123456789" -> 0x31C3).
std::uint16_t crc16(std::string_view data);

/// The cluster slot of `key`: the hash tag (between the first '{' and the first '}' after it)
/// when it is not empty, else the whole key.
int keySlot(std::string_view key);

}  // namespace ratelab::redis
