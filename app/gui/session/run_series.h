#pragma once

// The live charts' data: one bounded buffer per series, filled from the run's samples at full
// resolution. Views decimate from here each frame (decimate.h); nothing here knows the plot.

#include <QObject>
#include <QString>

#include <cstdint>
#include <span>
#include <vector>

#include "gui/session/sim_batch.h"

namespace ratelab::gui {

enum class ChartKind : std::uint8_t { Traffic, Keyspace, StoreErrors, Latency };
inline constexpr ChartKind kChartKinds[] = {ChartKind::Traffic, ChartKind::Keyspace,
                                            ChartKind::StoreErrors, ChartKind::Latency};

/// What one series measures. Rates are per second of virtual time.
enum class SeriesRole : std::uint8_t {
    AllowedPerSecond,    ///< one class's allowed requests
    ThrottledPerSecond,  ///< one class's 429s
    Buckets,             ///< live buckets over every store
    BudgetSlots,         ///< live budget slots
    StoreErrorsPerSecond,
    FailedOpenPerSecond,      ///< passes only because the store failed (every class)
    FailedClosedPerSecond,    ///< 503s (every class)
    DecidedLocallyPerSecond,  ///< decided on a replica's own store in an outage (every class)
    StoreFullPerSecond,       ///< 503s because the store had no room (every class)
    EngineNanosPerDecision,   ///< what the engine spent per decision (its calls, the store's
                              ///< included)
};

/// A stretch of virtual time, in seconds.
struct TimeSpan {
    double from = 0;
    double to = 0;
};

struct SeriesSpec {
    QString name;
    ChartKind chart = ChartKind::Traffic;
    SeriesRole role = SeriesRole::AllowedPerSecond;
    int classIndex = -1;  ///< per-class roles; -1 otherwise
    QString className;
    /// Compare mode: 0 for A (the reference), 1 for B (the editor's). Always 0 otherwise.
    int lane = 0;
};

/// One line of a highlighted client: its allowed or throttled requests per second in each
/// sample, indexed like RunSeries::xs().
struct HighlightLine {
    QString name;  ///< the client's key, what it counts, and in compare mode its lane
    SeriesRole role = SeriesRole::AllowedPerSecond;
    int lane = 0;
    std::vector<double> ys;
};

/// GUI thread only. Keeps at most kMaxSamples samples per series (the oldest go first).
class RunSeries : public QObject {
    Q_OBJECT

public:
    static constexpr std::size_t kMaxSamples = std::size_t(1) << 17;

    explicit RunSeries(QObject* parent = nullptr);

    /// Defines the series for a new run and drops every value. In compare mode every series is
    /// A's, and the per-class traffic and the live buckets have a twin for B.
    void reset(const RunShape& shape);
    /// Adds samples in time order; `samplesB` are lane B's over the same intervals (compare mode,
    /// where the worker sends both lanes' samples together; ignored otherwise).
    void append(const std::vector<sim::Sample>& samples,
                const std::vector<sim::Sample>& samplesB = {});

    bool comparing() const { return comparing_; }
    const std::vector<SeriesSpec>& specs() const { return specs_; }
    /// Sample times (the end of each interval), seconds of virtual time, ascending.
    std::span<const double> xs() const { return xs_; }
    std::span<const double> ys(std::size_t series) const { return ys_[series]; }
    std::size_t size() const { return xs_.size(); }
    /// The run's span in seconds of virtual time.
    double durationSeconds() const { return durationSeconds_; }
    /// The stores' bucket cap at the newest sample (0: none known).
    double storeCap() const { return storeCap_; }
    /// Where the store refused requests as full (samples with store_full > 0, adjacent ones
    /// merged), oldest first; at most kMaxSpans (the newest merge into the last).
    const std::vector<TimeSpan>& storeFullSpans() const { return storeFullSpans_; }
    static constexpr std::size_t kMaxSpans = 64;

    /// Draws a replay's client over the totals: lines of its allowed and throttled requests
    /// per sample (per lane in compare mode) named after `key`, filled by addTrace().
    void setHighlight(std::int64_t instance, const QString& key);
    void clearHighlight();
    /// The highlighted client's instance, -1 when none is.
    std::int64_t highlightedClient() const { return highlighted_; }
    const std::vector<HighlightLine>& highlightLines() const { return highlight_; }
    /// The highlighted client's intervals as the worker sent them (a trace of another client
    /// is ignored).
    void addTrace(const ClientTrace& trace);

signals:
    /// The series were redefined (a new run).
    void reshaped();
    /// Values were added.
    void appended();
    /// A client was highlighted, or the highlight cleared.
    void highlightChanged();

private:
    double valueOf(const SeriesSpec& spec, const sim::Sample& sample, double seconds) const;
    void noteStoreFull(const sim::Sample& sample);
    /// Recomputes the highlight's values of samples `from` onwards from the traced intervals.
    void computeHighlight(std::size_t from);

    std::vector<SeriesSpec> specs_;
    bool comparing_ = false;
    std::vector<double> xs_;
    std::vector<std::vector<double>> ys_;
    double durationSeconds_ = 0;
    double storeCap_ = 0;
    std::vector<TimeSpan> storeFullSpans_;
    // Each sample's span in virtual time, indexed like xs_.
    std::vector<Nanos> starts_;
    std::vector<Nanos> ends_;
    Nanos traceInterval_ = kNanosPerSecond;  // the run's sample interval as the scenario gives it
    std::int64_t highlighted_ = -1;
    std::vector<HighlightLine> highlight_;
    std::vector<std::vector<sim::ClientInterval>> traced_;  // per lane
};

}  // namespace ratelab::gui
