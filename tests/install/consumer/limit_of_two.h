#pragma once

// The policy every consumer decides with: two requests at once, one more a second. Built in
// code, from the installed headers alone.

#include <ratelab/policy.h>

inline ratelab::PolicySet limitOfTwo() {
    ratelab::Policy api;
    api.name = "api";
    api.capacity = 2;
    api.refillPerSecond = 1.0;
    ratelab::PolicySet set;
    set.policies.push_back(api);
    return set;
}
