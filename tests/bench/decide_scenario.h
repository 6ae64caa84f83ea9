#pragma once

// The 10^6-request scenario the decision figures are measured on (bench_decide.cpp) and the
// workbench's trade-off map is timed on (tradeoff_frames.cpp): 10 s of virtual time, 1000 users
// at 1/s with their own tokens, one client rotating its Authorization header at 60,000/s and
// one flooding from one address at 39,000/s.

namespace ratelab::bench {

inline constexpr const char* kDecideScenarioJson = R"({ "name": "decide-bench", "seed": 3,
  "duration_s": 10,
  "actors": [
    { "name": "users", "class": "legit", "count": 1000,
      "arrival": { "kind": "constant", "rate_per_s": 1 },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "10.1.0.0/16" },
                    "authorization": "fixed" } },
    { "name": "rotator", "class": "attacker",
      "arrival": { "kind": "constant", "rate_per_s": 60000 },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.7" },
                    "authorization": "rotate" } },
    { "name": "flood", "class": "attacker",
      "arrival": { "kind": "constant", "rate_per_s": 39000 },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.8" } } } ],
  "expect": [ { "metric": "legit.throttled_fraction", "max": 0.01 },
              { "metric": "attacker.allowed_per_s", "max": 400 } ] })";

}  // namespace ratelab::bench
