#pragma once

// What the two halves of the policy file's schema reader share: policy_reader.cpp (the set and
// each policy) and policy_store_reader.cpp (the store and the trusted proxies).

#include <cstdint>
#include <string_view>
#include <vector>

#include "policy/policy_file_internal.h"

namespace ratelab::policy::reader {

using Type = json::Value::Type;

inline constexpr std::int64_t kMaxCount = 1'000'000'000;

/// An array whose items are checked one by one; returns the items that have the wanted type.
std::vector<const json::Value*> itemsOf(Diagnostics& sink, const json::Value& array, Type type,
                                        std::string_view what);
/// A string item of 1..maxLength code points.
bool stringItem(Diagnostics& sink, const json::Value& item, std::string_view what,
                std::size_t maxLength);
/// Reports the second of two equal strings in an array (JSON Schema uniqueItems).
bool uniqueItems(Diagnostics& sink, const std::vector<const json::Value*>& items,
                 std::string_view what);

/// CIDR strings; a CIDR that does not parse strictly is a semantic error.
void readCidrs(Diagnostics& sink, const json::Value& array, std::vector<Cidr>& out);
/// The "store" object.
void readStore(Diagnostics& sink, const json::Value& object, StoreConfig& store);
/// The "trusted_proxies" object.
void readTrustedProxies(Diagnostics& sink, const json::Value& object, TrustedProxies& proxies);

}  // namespace ratelab::policy::reader
