#include "sim/fit/fit_summary.h"

#include <algorithm>
#include <cmath>

namespace ratelab::sim::fit {

namespace {

// The standard normal's quantile (P. J. Acklam's rational approximation, relative error below
// 1.2e-9), for p in (0, 1).
double normalQuantile(double p) {
    static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                   -2.759285104469687e+02, 1.383577518672690e+02,
                                   -3.066479806614716e+01, 2.506628277459239e+00};
    static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                   -1.556989798598866e+02, 6.680131188771972e+01,
                                   -1.328068155288572e+01};
    static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                   -2.400758277161838e+00, -2.549732539343734e+00,
                                   4.374664141464968e+00,  2.938163982698783e+00};
    static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                   2.445134137142996e+00, 3.754408661907416e+00};
    constexpr double low = 0.02425;
    if (p < low) {
        const double q = std::sqrt(-2 * std::log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - low) return -normalQuantile(1 - p);
    const double q = p - 0.5;
    const double r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace

std::uint32_t Summary::bucketOf(std::uint64_t value) {
    if (value < 16) return static_cast<std::uint32_t>(value);
    const int exponent = 63 - __builtin_clzll(value);  // 4 or more
    const std::uint64_t mantissa = (value >> (exponent - 4)) & 15;
    return static_cast<std::uint32_t>(16 + (exponent - 4) * 16 + static_cast<int>(mantissa));
}

void Summary::add(std::uint64_t value, std::uint64_t companion) {
    ++count_;
    sum_ += static_cast<double>(value);
    if (value == 0) {
        ++zeros_;
    } else {
        const double l = std::log(static_cast<double>(value));
        logSum_ += l;
        logSquares_ += l * l;
    }
    if (buckets_.empty() && exact_.size() < kExact) {
        exact_.emplace_back(value, companion);
        return;
    }
    auto insert = [this](std::uint64_t v, std::uint64_t c) {
        const std::uint32_t id = bucketOf(v);
        auto it = std::lower_bound(buckets_.begin(), buckets_.end(), id,
                                   [](const Bucket& b, std::uint32_t i) { return b.id < i; });
        if (it == buckets_.end() || it->id != id) it = buckets_.insert(it, Bucket{id, 0, 0, 0});
        it->count += 1;
        it->sum += static_cast<double>(v);
        it->companions += static_cast<double>(c);
    };
    if (!exact_.empty()) {
        for (const auto& [v, c] : exact_)
            insert(v, c);
        exact_ = {};
    }
    insert(value, companion);
}

std::vector<Summary::Weighted> Summary::sorted() const {
    std::vector<Weighted> out;
    if (buckets_.empty()) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> values = exact_;
        std::sort(values.begin(), values.end());
        for (const auto& [v, c] : values)
            out.push_back({static_cast<double>(v), static_cast<double>(c), 1});
    } else {
        for (const Bucket& b : buckets_) {
            const auto n = static_cast<double>(b.count);
            out.push_back({b.sum / n, b.companions / n, n});
        }
    }
    return out;
}

void Summary::equalShares(const std::vector<Weighted>& entries, double count, std::size_t k,
                          Shares& out) {
    const double per = count / static_cast<double>(k);
    double need = per;  // of the share being filled
    double sum = 0;
    double companions = 0;
    std::size_t made = 0;
    for (const Weighted& w : entries) {
        double left = w.count;
        while (left > 0 && made < k) {
            const double take = std::min(left, need);
            sum += take * w.value;
            companions += take * w.companion;
            left -= take;
            need -= take;
            if (need <= per * 1e-9) {
                out.values.push_back(sum / per);
                out.companions.push_back(companions / per);
                sum = companions = 0;
                need = per;
                ++made;
            }
        }
    }
    if (made < k && need < per) {  // rounding's rest
        out.values.push_back(sum / (per - need));
        out.companions.push_back(companions / (per - need));
    }
}

std::vector<double> Summary::lognormal(std::size_t k) const {
    const std::int64_t positive = count_ - zeros_;
    auto zeros = static_cast<std::size_t>(std::llround(
        static_cast<double>(k) * static_cast<double>(zeros_) / static_cast<double>(count_)));
    if (positive > 0) zeros = std::min(zeros, k - 1);
    std::vector<double> out(zeros, 0.0);
    if (positive == 0) return out;
    const double n = static_cast<double>(positive);
    const double mu = logSum_ / n;
    const double sigma = std::sqrt(std::max(0.0, logSquares_ / n - mu * mu));
    const std::size_t rest = k - zeros;
    for (std::size_t i = 0; i < rest; ++i) {
        const double p = (static_cast<double>(i) + 0.5) / static_cast<double>(rest);
        out.push_back(std::exp(mu + sigma * normalQuantile(p)));
    }
    return out;
}

Summary::Shares Summary::shares(std::size_t k, FitDistributions how, double unit,
                                double companionUnit) const {
    Shares out;
    std::vector<Weighted> entries = sorted();
    const auto n = static_cast<double>(count_);
    if (static_cast<std::size_t>(count_) <= k) {
        for (const Weighted& w : entries) {
            out.values.push_back(w.value);
            out.companions.push_back(w.companion);
        }
    } else if (how == FitDistributions::Lognormal) {
        out.values = lognormal(k);
        out.companions.assign(out.values.size(), 0);
    } else {
        // The heaviest values first: each holding a k-th of the sum keeps its own probability.
        std::vector<Weighted> heavy;
        double rest = n;
        while (!entries.empty() && heavy.size() < k / 4 &&
               entries.back().value * entries.back().count * static_cast<double>(k) >= sum_) {
            heavy.push_back(entries.back());
            rest -= entries.back().count;
            entries.pop_back();
        }
        const std::size_t plain = k - heavy.size();
        if (rest <= static_cast<double>(plain)) {
            for (const Weighted& w : entries) {
                for (double c = 0; c < w.count; ++c) {  // exact observations: count 1 each
                    out.values.push_back(w.value);
                    out.companions.push_back(w.companion);
                }
            }
        } else if (rest > 0) {
            equalShares(entries, rest, plain, out);
        }
        if (!heavy.empty()) {
            out.probabilities.assign(out.values.size(), 0);
            for (auto it = heavy.rbegin(); it != heavy.rend(); ++it) {
                out.values.push_back(it->value);
                out.companions.push_back(it->companion);
                out.probabilities.push_back(it->count / n);
            }
        }
    }
    for (double& v : out.values)
        v *= unit;
    for (double& c : out.companions)
        c *= companionUnit;
    return out;
}

}  // namespace ratelab::sim::fit
