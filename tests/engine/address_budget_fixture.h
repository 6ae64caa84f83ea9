#pragma once

// Address budgets driven straight through a Store (memory or Redis alike): a client minting a
// new IPv6 /64 per request inside networks the test chooses, with the chain a policy's default
// key rules give it (the /64 counts against its /48 and its /32), and what each call charged.

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ratelab/store.h"

namespace ratelab::testing {

/// One /64 inside 2001:db8::/32: /48 number `net48` (from 0; written as 1 + net48, so that no
/// group is zero and the text is canonical), /64 number `subnet` within it.
struct MintedAddress {
    std::string key;       ///< "ip:2001:db8:<net48>:<subnet>::/64"
    std::string scope48;   ///< "net:2001:db8:<net48>::/48"
    std::string bucket48;  ///< "ip:2001:db8:<net48>::/48"
    std::string scope32 = "net:2001:db8::/32";
    std::string bucket32 = "ip:2001:db8::/32";

    MintedAddress(unsigned net48, unsigned subnet) {
        char hex48[8];
        char hex64[8];
        std::snprintf(hex48, sizeof hex48, "%x", (net48 + 1) & 0xffff);
        std::snprintf(hex64, sizeof hex64, "%x", 1 + subnet % 0xfffe);
        key = "ip:2001:db8:" + std::string(hex48) + ":" + hex64 + "::/64";
        scope48 = "net:2001:db8:" + std::string(hex48) + "::/48";
        bucket48 = "ip:2001:db8:" + std::string(hex48) + "::/48";
    }
};

/// Caps of the two levels, and the slot lifetime.
struct AddressCaps {
    std::uint32_t per48 = 20;
    std::uint32_t per32 = 60;
    Nanos slotTtl = 600 * kNanosPerSecond;
};

/// Consumes once for `address` at `now` with its /48 -> /32 chain, partitioned by the /32.
inline ConsumeResult consumeMinted(Store& store, const Limit& limit, const MintedAddress& address,
                                   const AddressCaps& caps, Nanos now) {
    BucketBudget outer{address.scope32, address.bucket32, caps.per32, caps.slotTtl, nullptr};
    BucketBudget inner{address.scope48, address.bucket48, caps.per48, caps.slotTtl, &outer};
    ConsumeRequest r;
    r.limitId = 1;
    r.limitName = "api";
    r.limit = &limit;
    r.partition = address.bucket32;
    r.key = address.key;
    r.budget = &inner;
    r.now = now;
    return store.consume(r);
}

/// What a minting run charged: per /48 how many of its /64s got a bucket of their own, which
/// /48 buckets were charged, how often the /32's bucket was.
struct MintCounts {
    std::vector<int> own64PerNet48;
    std::set<unsigned> charged48;
    int charged32 = 0;
    int failures = 0;
    std::string firstError;

    /// Distinct buckets that took a slot in the /32's scope: the /64s and the /48 buckets.
    int members32() const {
        int n = static_cast<int>(charged48.size());
        for (int v : own64PerNet48)
            n += v;
        return n;
    }
};

/// `threads` threads each mint `perThread` fresh /64s, spread over `nets48` /48s of
/// 2001:db8::/32, all at the same instant (nothing expires), concurrently.
inline MintCounts mintConcurrently(Store& store, const Limit& limit, const AddressCaps& caps,
                                   int threads, int perThread, unsigned nets48, Nanos now) {
    MintCounts counts;
    counts.own64PerNet48.assign(nets48, 0);
    std::mutex mutex;
    std::vector<std::thread> workers;
    std::atomic<int> ready{0};
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::vector<int> own(nets48, 0);
            std::set<unsigned> charged48;
            int charged32 = 0;
            int failures = 0;
            std::string error;
            ready.fetch_add(1);
            while (ready.load() < threads) {
            }  // start together, so the calls overlap
            for (int i = 0; i < perThread; ++i) {
                const unsigned net = static_cast<unsigned>(i) % nets48;
                const unsigned subnet = static_cast<unsigned>(t * perThread + i);
                const MintedAddress address(net, subnet);
                const ConsumeResult r = consumeMinted(store, limit, address, caps, now);
                if (r.status != StoreStatus::Ok) {
                    if (failures++ == 0) error = r.error;
                    continue;
                }
                if (r.chargedLevel == 0) ++own[net];
                if (r.chargedLevel == 1) charged48.insert(net);
                if (r.chargedLevel == 2) ++charged32;
            }
            std::lock_guard<std::mutex> lock(mutex);
            for (unsigned n = 0; n < nets48; ++n)
                counts.own64PerNet48[n] += own[n];
            counts.charged48.insert(charged48.begin(), charged48.end());
            counts.charged32 += charged32;
            counts.failures += failures;
            if (counts.firstError.empty()) counts.firstError = error;
        });
    }
    for (std::thread& w : workers)
        w.join();
    return counts;
}

}  // namespace ratelab::testing
