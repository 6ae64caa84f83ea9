#pragma once

// Observations of one quantity a fit models (session sizes, or gaps in nanoseconds), kept in
// bounded memory, and the distribution a fitted arrival draws from them (sim/fit/log_fit.h's
// internals).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ratelab::sim::fit {

/// How a fit turns observations into the values of a Distribution.
enum class FitDistributions : std::uint8_t {
    /// Equal shares of the sorted observations, each by its mean (an equi-depth histogram):
    /// the observations' mean and tail as they were.
    Empirical,
    /// A lognormal fitted to the positive observations by the moments of their logarithms
    /// (zeros kept as zeros), written as its quantiles at the shares' midpoints.
    Lognormal,
};

/// Every value while there are few, then a histogram of log-spaced buckets (16 to each power
/// of two, so within 6.25 % of their values), each with its count and sum. Each value may
/// carry a companion (a session's span with its size), summed alongside it, so that shares of
/// the values come with the mean of their companions. Not thread-safe.
class Summary {
public:
    void add(std::uint64_t value, std::uint64_t companion = 0);
    std::int64_t count() const { return count_; }
    double mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0; }

    /// What a Distribution is made of: values (times `unit`), their probabilities (empty:
    /// equally likely; 0: sharing the rest), and the mean of each value's companions (times
    /// `companionUnit`).
    struct Shares {
        std::vector<double> values;
        std::vector<double> probabilities;
        std::vector<double> companions;
    };
    /// At most `k` values: every observation when there are at most `k`; else, as `how` says,
    /// equal shares of them by their means, where the largest values that each hold a k-th of
    /// the observations' sum or more (at most k / 4 of them: a session a hundred times the
    /// others) keep their own probability and mean. REQUIRES: count() > 0, k > 0.
    Shares shares(std::size_t k, FitDistributions how, double unit, double companionUnit) const;

private:
    struct Bucket {
        std::uint32_t id;
        std::int64_t count;
        double sum;
        double companions;
    };
    // A value, its companion, and how many observations they stand for (a bucket's means and
    // count).
    struct Weighted {
        double value;
        double companion;
        double count;
    };
    static constexpr std::size_t kExact = 64;
    static std::uint32_t bucketOf(std::uint64_t value);
    std::vector<Weighted> sorted() const;
    // `k` equal shares of `entries` (ascending), each by its mean value and companion.
    static void equalShares(const std::vector<Weighted>& entries, double count, std::size_t k,
                            Shares& out);
    std::vector<double> lognormal(std::size_t k) const;

    std::vector<std::pair<std::uint64_t, std::uint64_t>> exact_;  // while count_ <= kExact
    std::vector<Bucket> buckets_;                                 // by id, once there were more
    std::int64_t count_ = 0;
    double sum_ = 0;
    std::int64_t zeros_ = 0;
    double logSum_ = 0;  // over the positive values: ln v and (ln v)^2
    double logSquares_ = 0;
};

}  // namespace ratelab::sim::fit
