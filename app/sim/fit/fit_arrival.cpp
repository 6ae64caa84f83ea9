#include "sim/fit/fit_arrival.h"

#include <algorithm>
#include <cmath>

#include "sim/scenario/scenario_limits.h"

namespace ratelab::sim::fit {

namespace {

// Values are written rounded (gaps to the microsecond, counts to a thousandth: what a draw
// rounds them to anyway), each held inside the loader's bounds. Divided, not multiplied, by the
// power of ten, so that the double is the one nearest the decimal and is written short.
double roundTo(double x, double scale) {
    return std::round(x * scale) / scale;
}

// The distribution of a summary's values, rounded to `scale` and held within [min, max];
// `spans`, when given, receives the mean companion of each value, in seconds.
Distribution distributionOf(const Summary& s, const FitOptions& options, double unit, double scale,
                            double min, double max, std::vector<double>* spans = nullptr) {
    Distribution d;
    if (s.count() == 0) {
        d.values = {min};
        if (spans) spans->assign(1, 0);
        return d;
    }
    const Summary::Shares shares = s.shares(options.values, options.distributions, unit, 1e-9);
    for (double v : shares.values)
        d.values.push_back(std::clamp(roundTo(v, scale), min, max));
    if (!shares.probabilities.empty()) {
        // Probabilities to the billionth, never 0 (which would mean "shares the rest"); when
        // every value has one, the last takes what rounding left, so that they add up to 1.
        double sum = 0;
        bool plain = false;
        for (double p : shares.probabilities) {
            d.probabilities.push_back(p > 0 ? std::max(roundTo(p, 1e9), 1e-9) : 0);
            sum += d.probabilities.back();
            plain = plain || p == 0;
        }
        if (!plain) d.probabilities.back() += 1 - sum;
    }
    if (spans) {
        spans->clear();
        for (double c : shares.companions)
            spans->push_back(std::clamp(roundTo(c, 1e6), 0.0, scenario_limits::kMaxSeconds));
    }
    return d;
}

Distribution gapsOf(const Summary& s, const FitOptions& options) {
    return distributionOf(s, options, 1e-9, 1e6, 0, scenario_limits::kMaxSeconds);
}

Distribution countsOf(const Summary& s, const FitOptions& options, double max) {
    return distributionOf(s, options, 1, 1e3, 1, max);
}

}  // namespace

Arrival fittedArrival(const Arrivals& arrivals, const Summary& sessions, const Summary& requests,
                      Nanos resolution, const FitOptions& options) {
    Arrival r;
    // A log of whole seconds is replayed at whole seconds: what a limiter saw of it.
    r.resolution = resolution;
    if (options.model == FitModel::Empirical) {
        r.kind = Arrival::Kind::Empirical;
        r.total = countsOf(requests, options, scenario_limits::kMaxArrivalTotal);
        r.gaps = gapsOf(arrivals.gaps, options);
        return r;
    }
    r.kind = Arrival::Kind::Session;
    // Each share of the sessions by size keeps the mean span of its sessions.
    r.sessionSize = distributionOf(arrivals.sessions, options, 1, 1e3, 1,
                                   static_cast<double>(scenario_limits::kMaxSessionSize),
                                   &r.sessionSpan.values);
    if (options.distributions != FitDistributions::Empirical) {
        // Lognormal sizes are no shares of the sessions: the spans' mean stands for all.
        double sum = 0;
        for (double v : r.sessionSpan.values)
            sum += v;
        r.sessionSpan.values = {sum / static_cast<double>(r.sessionSpan.values.size())};
    }
    // Clients of one session each need neither a count of sessions nor idle gaps.
    if (arrivals.idle.count() > 0) {
        r.idle = gapsOf(arrivals.idle, options);
        r.total = countsOf(sessions, options, scenario_limits::kMaxArrivalTotal);
    }
    return r;
}

}  // namespace ratelab::sim::fit
