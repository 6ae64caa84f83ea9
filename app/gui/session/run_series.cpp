#include "gui/session/run_series.h"

#include <algorithm>
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
    starts_.clear();
    ends_.clear();
    ys_.assign(specs_.size(), {});
    traceInterval_ = std::max<Nanos>(1, shape.sampleInterval);
    highlighted_ = -1;
    highlight_.clear();
    traced_.clear();
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
        starts_.push_back(s.start);
        ends_.push_back(s.end);
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
    std::size_t known = highlight_.empty() ? 0 : highlight_.front().ys.size();
    if (xs_.size() > kMaxSamples) {
        known = 0;  // the highlight's values are computed again
        const auto drop = static_cast<std::ptrdiff_t>(xs_.size() - kMaxSamples + kMaxSamples / 8);
        xs_.erase(xs_.begin(), xs_.begin() + drop);
        starts_.erase(starts_.begin(), starts_.begin() + drop);
        ends_.erase(ends_.begin(), ends_.begin() + drop);
        for (auto& y : ys_)
            y.erase(y.begin(), y.begin() + drop);
    }
    if (highlighted_ >= 0 && !traced_.empty()) computeHighlight(std::min(known, xs_.size()));
    emit appended();
}

void RunSeries::setHighlight(std::int64_t instance, const QString& key) {
    highlighted_ = instance;
    highlight_.clear();
    const auto lanes = comparing_ ? QStringList{" (A)", " (B)"} : QStringList{""};
    for (int lane = 0; lane < lanes.size(); ++lane) {
        highlight_.push_back(
            {tr("%1 allowed%2").arg(key, lanes[lane]), SeriesRole::AllowedPerSecond, lane, {}});
        highlight_.push_back(
            {tr("%1 throttled%2").arg(key, lanes[lane]), SeriesRole::ThrottledPerSecond, lane, {}});
    }
    // No values until the worker's first trace: then every sample's at once.
    traced_.clear();
    emit highlightChanged();
}

void RunSeries::clearHighlight() {
    if (highlighted_ < 0) return;
    highlighted_ = -1;
    highlight_.clear();
    traced_.clear();
    emit highlightChanged();
}

void RunSeries::addTrace(const ClientTrace& trace) {
    if (trace.instance != highlighted_ || highlighted_ < 0) return;
    if (traced_.empty()) {  // the first: all of the client's intervals so far
        if (trace.lanes.size() * 2 != highlight_.size() ||
            std::any_of(trace.from.begin(), trace.from.end(), [](std::size_t f) { return f > 0; }))
            return;
        traced_ = trace.lanes;
        computeHighlight(0);
        return;
    }
    if (trace.lanes.size() != traced_.size()) return;
    Nanos changedFrom = std::numeric_limits<Nanos>::max();
    for (std::size_t l = 0; l < traced_.size(); ++l) {
        std::vector<sim::ClientInterval>& mine = traced_[l];
        // A trace past what is known belongs to an earlier highlight of the same client: the
        // worker sends this one's from the start.
        if (trace.from[l] > mine.size()) return;
    }
    for (std::size_t l = 0; l < traced_.size(); ++l) {
        std::vector<sim::ClientInterval>& mine = traced_[l];
        const std::vector<sim::ClientInterval>& next = trace.lanes[l];
        if (trace.from[l] < mine.size()) {
            changedFrom = std::min(changedFrom, mine[trace.from[l]].interval * traceInterval_);
        }
        if (!next.empty())
            changedFrom = std::min(changedFrom, next.front().interval * traceInterval_);
        mine.resize(trace.from[l]);
        mine.insert(mine.end(), next.begin(), next.end());
    }
    if (changedFrom == std::numeric_limits<Nanos>::max()) return;
    // The first sample ending after the first interval that changed.
    const auto first = std::upper_bound(ends_.begin(), ends_.end(), changedFrom);
    computeHighlight(static_cast<std::size_t>(first - ends_.begin()));
}

void RunSeries::computeHighlight(std::size_t from) {
    for (HighlightLine& line : highlight_) {
        line.ys.resize(xs_.size());
        const std::vector<sim::ClientInterval>& intervals =
            traced_[static_cast<std::size_t>(line.lane)];
        const bool allowed = line.role == SeriesRole::AllowedPerSecond;
        // Each sample sums the intervals inside it (samples are whole intervals).
        auto it = std::lower_bound(intervals.begin(), intervals.end(),
                                   from < starts_.size() ? starts_[from] : 0,
                                   [this](const sim::ClientInterval& c, Nanos t) {
                                       return c.interval * traceInterval_ < t;
                                   });
        for (std::size_t k = from; k < xs_.size(); ++k) {
            while (it != intervals.end() && it->interval * traceInterval_ < starts_[k])
                ++it;
            std::int64_t n = 0;
            for (; it != intervals.end() && it->interval * traceInterval_ < ends_[k]; ++it)
                n += allowed ? it->allowed : it->throttled;
            const double seconds = static_cast<double>(ends_[k] - starts_[k]) / 1e9;
            line.ys[k] = seconds > 0 ? static_cast<double>(n) / seconds : 0;
        }
    }
}

}  // namespace ratelab::gui
