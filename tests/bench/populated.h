#pragma once

// What the keyed-check benchmarks share: the limit they check, a memory store and a naive
// limiter filled with a key set (built once per size and process), the process's resident set,
// and how much of the store's tables the kernel put on transparent huge pages.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "bench/key_sets.h"
#include "bench/naive_limiter.h"
#include "ratelab/memory_store.h"

namespace ratelab::bench {

inline constexpr Nanos kCheckStep = 1000;  // virtual time between checks on one thread

inline Limit benchLimit() {
    Limit l;
    l.algorithm = Algorithm::TokenBucket;
    l.capacity = 20;
    l.emissionInterval = kNanosPerSecond;
    return l;
}

/// A memory store holding every key of the set, shared by the threads of one benchmark.
struct PopulatedStore {
    std::unique_ptr<Store> store;
    Limit limit = benchLimit();

    explicit PopulatedStore(const KeySet& keys) {
        MemoryStoreOptions options;
        options.maxBuckets = static_cast<std::int64_t>(keys.size) * 2;
        options.hashSeed = 1;
        store = makeMemoryStore(options);
        ConsumeRequest r = request();
        for (std::size_t i = 0; i < keys.size; ++i) {
            const KeyBytes k(i);
            r.key = k.view();
            r.partition = k.view();
            store->consume(r);
        }
    }
    ConsumeRequest request() const {
        ConsumeRequest r;
        r.limitName = "bench";
        r.limit = &limit;
        return r;
    }
};

struct PopulatedNaive {
    NaiveLimiter limiter{20, 1.0};
    explicit PopulatedNaive(const KeySet& keys) {
        for (std::size_t i = 0; i < keys.size; ++i)
            limiter.check(KeyBytes(i).view(), 0);
    }
};

/// The one T built for `keyCount` keys in this process.
template <class T>
T& populated(std::size_t keyCount) {
    static std::mutex mutex;
    static std::map<std::size_t, std::unique_ptr<T>> instances;
    std::lock_guard<std::mutex> lock(mutex);
    auto& p = instances[keyCount];
    if (!p) p = std::make_unique<T>(KeySet::of(keyCount));
    return *p;
}

/// Resident memory of this process, in bytes.
std::int64_t residentBytes();

/// The share (0 to 1) of this process's huge-page-advised mappings (VmFlags `hg`: the memory
/// store's slot arrays of 2 MiB and more, nothing else in the benchmark asks for them) that
/// the kernel backs with transparent huge pages (AnonHugePages), from /proc/self/smaps; -1 when
/// there is no such mapping or smaps cannot be read.
double hugePageShare();

}  // namespace ratelab::bench
