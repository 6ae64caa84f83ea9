#pragma once

// The spellings of a scenario file's enumerations, read by the scenario reader and written by
// the writer (and offered by the workbench's scenario editor): one list per enumeration.

#include <initializer_list>
#include <string_view>
#include <utility>

#include "sim/scenario/scenario.h"

namespace ratelab::sim::scenario_names {

template <class E>
using Spellings = std::initializer_list<std::pair<std::string_view, E>>;

inline const Spellings<Arrival::Kind> kArrivalKinds = {
    {"constant", Arrival::Kind::Constant}, {"poisson", Arrival::Kind::Poisson},
    {"burst", Arrival::Kind::Burst},       {"ramp", Arrival::Kind::Ramp},
    {"session", Arrival::Kind::Session},   {"empirical", Arrival::Kind::Empirical}};

inline const Spellings<PeerSpec::Kind> kPeerKinds = {
    {"none", PeerSpec::Kind::None},
    {"ipv4", PeerSpec::Kind::Ipv4},
    {"ipv4_pool", PeerSpec::Kind::Ipv4Pool},
    {"nat", PeerSpec::Kind::Nat},
    {"ipv6", PeerSpec::Kind::Ipv6},
    {"ipv6_rotate", PeerSpec::Kind::Ipv6Rotate},
    {"ipv6_prefix_rotate", PeerSpec::Kind::Ipv6PrefixRotate},
    {"ipv4_rotate", PeerSpec::Kind::Ipv4Rotate}};

inline const Spellings<AuthorizationMode> kAuthorizationModes = {
    {"none", AuthorizationMode::None},
    {"fixed", AuthorizationMode::Fixed},
    {"rotate", AuthorizationMode::Rotate}};

inline const Spellings<PrincipalMode> kPrincipalModes = {{"none", PrincipalMode::None},
                                                         {"fixed", PrincipalMode::Fixed}};

inline const Spellings<ForwardedSpec::Kind> kForwardedKinds = {
    {"none", ForwardedSpec::Kind::None},
    {"spoof_random", ForwardedSpec::Kind::SpoofRandom},
    {"via_proxy", ForwardedSpec::Kind::ViaProxy},
    {"spoof_via_proxy", ForwardedSpec::Kind::SpoofViaProxy}};

inline const Spellings<ScenarioEvent::Kind> kEventKinds = {
    {"store_outage", ScenarioEvent::Kind::StoreOutage},
    {"store_latency", ScenarioEvent::Kind::StoreLatency},
    {"policy_change", ScenarioEvent::Kind::PolicyChange}};

inline const Spellings<StoreFailure> kStoreFailures = {{"transport", StoreFailure::Transport},
                                                       {"timeout", StoreFailure::Timeout},
                                                       {"refusal", StoreFailure::Refusal}};

inline const Spellings<PolicyMode> kPolicyModes = {{"enforce", PolicyMode::Enforce},
                                                   {"shadow", PolicyMode::Shadow}};

/// The spelling of `value` in `spellings` (every enumerator has one).
template <class E>
std::string_view nameOf(Spellings<E> spellings, E value) {
    for (const auto& [name, v] : spellings) {
        if (v == value) return name;
    }
    return {};
}

}  // namespace ratelab::sim::scenario_names
