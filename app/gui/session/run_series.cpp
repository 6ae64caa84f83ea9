#include "gui/session/run_series.h"

#include <limits>

namespace ratelab::gui {

RunSeries::RunSeries(QObject* parent) : QObject(parent) {}

void RunSeries::reset(const RunShape& shape) {
    specs_.clear();
    comparing_ = shape.comparing();
    // Compare mode names the lane in every legend entry it overlays: "legit allowed (A)".
    const auto lanes = comparing_ ? QStringList{" (A)", " (B)"} : QStringList{""};
    for (std::size_t c = 0; c < shape.classNames.size(); ++c) {
        const QString cls = QString::fromStdString(shape.classNames[c]);
        const int index = static_cast<int>(c);
        for (int lane = 0; lane < lanes.size(); ++lane) {
            specs_.push_back({cls + " allowed" + lanes[lane], ChartKind::Traffic,
                              SeriesRole::AllowedPerSecond, index, cls, lane});
            specs_.push_back({cls + " throttled" + lanes[lane], ChartKind::Traffic,
                              SeriesRole::ThrottledPerSecond, index, cls, lane});
        }
    }
    for (int lane = 0; lane < lanes.size(); ++lane) {
        specs_.push_back(
            {"live buckets" + lanes[lane], ChartKind::Keyspace, SeriesRole::Buckets, -1, {}, lane});
    }
    // The rest are A's alone (the store errors' chart says so in its title); the decision
    // latency is both lanes' together (one pass decides a request in each).
    specs_.push_back(
        {"budget slots" + lanes[0], ChartKind::Keyspace, SeriesRole::BudgetSlots, -1, {}});
    specs_.push_back(
        {"store errors", ChartKind::StoreErrors, SeriesRole::StoreErrorsPerSecond, -1, {}});
    specs_.push_back(
        {"failed open", ChartKind::StoreErrors, SeriesRole::FailedOpenPerSecond, -1, {}});
    specs_.push_back(
        {"failed closed (503)", ChartKind::StoreErrors, SeriesRole::FailedClosedPerSecond, -1, {}});
    specs_.push_back(
        {"decided locally", ChartKind::StoreErrors, SeriesRole::DecidedLocallyPerSecond, -1, {}});
    specs_.push_back(
        {"store full (503)", ChartKind::StoreErrors, SeriesRole::StoreFullPerSecond, -1, {}});
    specs_.push_back(
        {"ns per decision", ChartKind::Latency, SeriesRole::EngineNanosPerDecision, -1, {}});

    xs_.clear();
    ys_.assign(specs_.size(), {});
    durationSeconds_ = static_cast<double>(shape.duration) / 1e9;
    storeCap_ = 0;
    storeFullSpans_.clear();
    emit reshaped();
}

double RunSeries::valueOf(const SeriesSpec& spec, const sim::Sample& s, double seconds) const {
    auto perSecond = [seconds](std::int64_t n) { return static_cast<double>(n) / seconds; };
    auto cls = [&s, &spec]() -> const sim::ClassCounters& {
        return s.classes[static_cast<std::size_t>(spec.classIndex)];
    };
    switch (spec.role) {
        case SeriesRole::AllowedPerSecond:
            return perSecond(cls().allowed);
        case SeriesRole::ThrottledPerSecond:
            return perSecond(cls().throttled);
        case SeriesRole::Buckets:
            return static_cast<double>(s.keyspace.buckets);
        case SeriesRole::BudgetSlots:
            return static_cast<double>(s.keyspace.budgetSlots);
        case SeriesRole::StoreErrorsPerSecond:
            return perSecond(s.storeErrors);
        case SeriesRole::FailedOpenPerSecond: {
            std::int64_t n = 0;
            for (const sim::ClassCounters& c : s.classes)
                n += c.failedOpen;
            return perSecond(n);
        }
        case SeriesRole::FailedClosedPerSecond: {
            std::int64_t n = 0;
            for (const sim::ClassCounters& c : s.classes)
                n += c.failedClosed;
            return perSecond(n);
        }
        case SeriesRole::DecidedLocallyPerSecond: {
            std::int64_t n = 0;
            for (const sim::ClassCounters& c : s.classes)
                n += c.decidedLocally;
            return perSecond(n);
        }
        case SeriesRole::StoreFullPerSecond: {
            std::int64_t n = 0;
            for (const sim::ClassCounters& c : s.classes)
                n += c.storeFull;
            return perSecond(n);
        }
        case SeriesRole::EngineNanosPerDecision:
            return s.engineNanosPerDecision;
    }
    return 0;
}

void RunSeries::noteStoreFull(const sim::Sample& s) {
    std::int64_t full = 0;
    for (const sim::ClassCounters& c : s.classes)
        full += c.storeFull;
    if (full == 0) return;
    const double from = static_cast<double>(s.start) / 1e9;
    const double to = static_cast<double>(s.end) / 1e9;
    if (!storeFullSpans_.empty() &&
        (storeFullSpans_.back().to >= from || storeFullSpans_.size() == kMaxSpans)) {
        storeFullSpans_.back().to = to;
    } else {
        storeFullSpans_.push_back({from, to});
    }
}

void RunSeries::append(const std::vector<sim::Sample>& samples,
                       const std::vector<sim::Sample>& samplesB) {
    if (samples.empty()) return;
    // Both lanes close the same intervals in the same calls. Were they ever to differ, B is
    // left out (a gap: decimation skips NaN) rather than drawn against the wrong times.
    const bool withB = comparing_ && samplesB.size() == samples.size();
    for (std::size_t k = 0; k < samples.size(); ++k) {
        const sim::Sample& s = samples[k];
        if (s.end <= s.start) continue;
        const double seconds = static_cast<double>(s.end - s.start) / 1e9;
        xs_.push_back(static_cast<double>(s.end) / 1e9);
        for (std::size_t i = 0; i < specs_.size(); ++i) {
            const bool b = specs_[i].lane == 1;
            ys_[i].push_back(!b      ? valueOf(specs_[i], s, seconds)
                             : withB ? valueOf(specs_[i], samplesB[k], seconds)
                                     : std::numeric_limits<double>::quiet_NaN());
        }
        storeCap_ = static_cast<double>(s.keyspace.maxBuckets);
        noteStoreFull(s);
    }
    // Bounded: drop the oldest eighth at once, so the cost of erasing stays amortized.
    if (xs_.size() > kMaxSamples) {
        const auto drop = static_cast<std::ptrdiff_t>(xs_.size() - kMaxSamples + kMaxSamples / 8);
        xs_.erase(xs_.begin(), xs_.begin() + drop);
        for (auto& y : ys_)
            y.erase(y.begin(), y.begin() + drop);
    }
    emit appended();
}

}  // namespace ratelab::gui
