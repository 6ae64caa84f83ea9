#pragma once

// The scenario loader's bounds that other code must stay inside by construction (a fit writes
// only what the loader reads back): one owner for each, read by the loader
// (scenario_file.cpp, scenario_actor_reader.cpp) and by whoever builds scenarios.

#include <cstddef>
#include <cstdint>

namespace ratelab::sim::scenario_limits {

/// A run's virtual time, and any time in the file: a month.
inline constexpr double kMaxSeconds = 30.0 * 24 * 3600;
/// Samples of a run (duration_s / sample_ms).
inline constexpr std::int64_t kMaxSamples = 1'000'000;
/// Instances of one actor.
inline constexpr std::int64_t kMaxInstances = 1'000'000;
/// Requests in one burst or session.
inline constexpr std::int64_t kMaxSessionSize = 1'000'000;
/// Sessions or requests of one instance (session and empirical arrivals).
inline constexpr double kMaxArrivalTotal = 1e9;
/// Values of one distribution.
inline constexpr std::size_t kMaxValues = 64;
/// Requests of a whole scenario, estimated from its actors: a typo in a rate must not become a
/// run that never ends (about an hour and a half at the simulator's speed).
inline constexpr double kMaxRequests = 1e10;

}  // namespace ratelab::sim::scenario_limits
