#pragma once

// The policy the simulator and replay benchmarks decide under: the numbers of the shipped
// default policy (a token bucket of 20 refilled at 5 a second) on the default key chain.

#include "ratelab/policy.h"

namespace ratelab::bench {

inline PolicySet defaultPolicy() {
    PolicySet set;
    Policy p;
    p.name = "api";
    p.capacity = 20;
    p.refillPerSecond = 5.0;
    set.policies.push_back(p);
    return set;
}

}  // namespace ratelab::bench
