#pragma once

// The baseline every headline figure is measured against: what a limiter looks like when it is
// written the obvious way (the seed article's first version): one std::mutex around a
// std::unordered_map<std::string, bucket>, floating-point tokens, a std::string built from the
// key on every lookup. Written here, in the benchmark, so both run in the same process.

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ratelab::bench {

class NaiveLimiter {
public:
    NaiveLimiter(double capacity, double refillPerSecond)
        : capacity_(capacity), refillPerNano_(refillPerSecond / 1e9) {}

    /// True when the request of cost 1 passes. `now` in ns.
    bool check(std::string_view key, std::int64_t now) {
        std::lock_guard<std::mutex> lock(mutex_);
        Bucket& b = buckets_.try_emplace(std::string(key), Bucket{capacity_, now}).first->second;
        b.tokens =
            std::min(capacity_, b.tokens + static_cast<double>(now - b.last) * refillPerNano_);
        b.last = now;
        if (b.tokens >= 1.0) {
            b.tokens -= 1.0;
            return true;
        }
        return false;
    }

    std::size_t size() const { return buckets_.size(); }

private:
    struct Bucket {
        double tokens;
        std::int64_t last;
    };
    std::mutex mutex_;
    std::unordered_map<std::string, Bucket> buckets_;
    double capacity_;
    double refillPerNano_;
};

}  // namespace ratelab::bench
