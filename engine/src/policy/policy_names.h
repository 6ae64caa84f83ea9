#pragma once

// The spellings of the policy file's enums, shared by the reader, the writer and the exports.

#include <array>
#include <string_view>
#include <utility>

#include "algorithms/algorithm_names.h"
#include "ratelab/policy.h"

namespace ratelab::policy {

template <class E, std::size_t N>
using NameTable = std::array<std::pair<std::string_view, E>, N>;

/// The algorithms' own table (algorithms/algorithm_names.h), under the policy file's name.
inline constexpr const auto& kAlgorithms = algorithms::kAlgorithmNames;

inline constexpr NameTable<KeySource, 5> kKeySources{{
    {"default", KeySource::Default},
    {"peer", KeySource::Peer},
    {"header", KeySource::Header},
    {"principal", KeySource::Principal},
    {"composite", KeySource::Composite},
}};

inline constexpr NameTable<UnverifiedAuthorization, 2> kUnverifiedAuthorization{{
    {"budget", UnverifiedAuthorization::Budget},
    {"ignore", UnverifiedAuthorization::Ignore},
}};

inline constexpr NameTable<Routing, 2> kRoutings{{
    {"all", Routing::All},
    {"most_specific", Routing::MostSpecific},
}};

inline constexpr NameTable<WhenMissing, 4> kWhenMissing{{
    {"refuse", WhenMissing::Refuse},
    {"skip", WhenMissing::Skip},
    {"peer", WhenMissing::Peer},
    {"shared", WhenMissing::Shared},
}};

inline constexpr NameTable<StoreErrorRule, 3> kStoreErrorRules{{
    {"fail_open_on_transport", StoreErrorRule::FailOpenOnTransport},
    {"deny", StoreErrorRule::Deny},
    {"local", StoreErrorRule::Local},
}};

inline constexpr NameTable<ChargeRule, 3> kChargeRules{{
    {"always", ChargeRule::Always},
    {"failures", ChargeRule::Failures},
    {"successes", ChargeRule::Successes},
}};

inline constexpr NameTable<PolicyMode, 2> kModes{{
    {"enforce", PolicyMode::Enforce},
    {"shadow", PolicyMode::Shadow},
}};

inline constexpr NameTable<HeaderStyle, 4> kHeaderStyles{{
    {"ietf", HeaderStyle::Ietf},
    {"draft7", HeaderStyle::Draft7},
    {"legacy", HeaderStyle::Legacy},
    {"none", HeaderStyle::None},
}};

inline constexpr NameTable<WindowAlign, 2> kWindowAligns{{
    {"first_request", WindowAlign::FirstRequest},
    {"calendar", WindowAlign::Calendar},
}};

/// CalendarUnit::None is written as no calendar_unit at all.
inline constexpr NameTable<CalendarUnit, 2> kCalendarUnits{{
    {"month", CalendarUnit::Month},
    {"year", CalendarUnit::Year},
}};

inline constexpr NameTable<StoreConfig::Kind, 2> kStoreKinds{{
    {"memory", StoreConfig::Kind::Memory},
    {"redis", StoreConfig::Kind::Redis},
}};

inline constexpr std::array<std::string_view, 3> kForwardedHeaders{"x-forwarded-for", "forwarded",
                                                                   "x-real-ip"};

/// The spelling of `value` in `table`; "" when absent (never for a valid enum).
template <class E, std::size_t N>
constexpr std::string_view nameOf(const NameTable<E, N>& table, E value) {
    for (const auto& [name, v] : table) {
        if (v == value) return name;
    }
    return "";
}

/// "route", "method", "peer", "principal", "header:<name>", "attribute:<name>".
std::string keyPartText(const KeyPart& part);

/// True for the characters of an HTTP token (RFC 9110 tchar): header names, methods.
bool isTokenChar(char c);
/// True for the characters of policy, tier and attribute names: [A-Za-z0-9_.-].
bool isNameChar(char c);
/// A policy, tier or attribute name: 1..64 name characters, the first a letter or digit.
bool isValidName(std::string_view name);
/// An HTTP header or attribute name in a key: 1..256 token characters.
bool isValidToken(std::string_view token);
/// True for the characters a route may hold: printable ASCII without the space (other bytes
/// are percent-encoded).
bool isRouteChar(char c);
/// The longest route a policy may name, in bytes.
inline constexpr std::size_t kMaxRouteBytes = 2048;
/// A route a policy may name: it starts with "/", is at most kMaxRouteBytes long, and every
/// character isRouteChar.
bool isValidRoutePath(std::string_view path);

}  // namespace ratelab::policy
