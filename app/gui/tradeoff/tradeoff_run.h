#pragma once

// The trade-off map's model: one scenario swept over a grid of one or two policy fields, each
// cell a full run (sim::runSweepCell) on a pool thread, the finished cells arriving on the GUI
// thread one at a time, and, once every cell is in, the grid read as a decision exactly as
// `ratelab-cli tune` reads it (sim::readTradeoff: the frontier and the pick).

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/policy.h"
#include "sim/scenario/scenario.h"
#include "sim/decide/sweep.h"
#include "sim/decide/tradeoff.h"

namespace ratelab::gui {

class PolicyDocument;

/// GUI thread only; the cells run on its own pool of threads, never on the GUI thread.
class TradeoffRun : public QObject {
    Q_OBJECT

public:
    enum class State { Empty, Running, Finished, Cancelled };

    /// The two figures every cell trades against each other (sim::TradeoffPoint), offered as
    /// colouring metrics before the scenario's summary metrics.
    static constexpr const char* kLegitThrottled = "legitimate throttled fraction";
    static constexpr const char* kAttackerAdmitted = "attacker admitted per s";

    /// `threads` cells run at once (at least 1).
    explicit TradeoffRun(int threads, QObject* parent = nullptr);
    /// Cancels the cells in flight and waits for them (each stops within a slice).
    ~TradeoffRun() override;

    /// Starts a map of `scenario` under `policies` over `axes` (one or two), cancelling one
    /// under way. Returns false with `error` set, and changes nothing, when the grid is too
    /// large or a cell's value cannot be applied (capacity 0, a field the algorithm lacks, a
    /// policy name the set does not define).
    /// REQUIRES: the scenario checks against `policies`.
    bool start(sim::Scenario scenario, PolicySet policies, std::vector<sim::SweepAxis> axes,
               std::string& error);
    /// Stops the map: cells not finished are dropped; the finished ones stay on show.
    void cancel();

    State state() const { return state_; }
    /// Whether a pool thread is still running a cell (a cancelled one stops within a slice).
    bool busy() const { return pool_.activeThreadCount() > 0; }
    const sim::Scenario& scenario() const { return scenario_; }
    /// The policies the map was started with.
    const PolicySet& policies() const { return policies_; }
    const std::vector<sim::SweepAxis>& axes() const { return axes_; }
    /// Each axis's values, in order.
    const std::vector<std::vector<double>>& axisValues() const { return axisValues_; }
    /// Cells in grid order: the last axis varies fastest (sim::sweepGrid).
    std::size_t cellCount() const { return grid_.size(); }
    std::size_t cellsDone() const { return done_; }
    /// The cell at `index` once it has run, else null.
    const sim::SweepCell* cell(std::size_t index) const;
    /// Once every cell has run: the map read as a decision. Null before.
    const sim::TradeoffMap* decision() const { return decision_ ? &*decision_ : nullptr; }
    /// Whether the cell is on the frontier (false before the map is complete).
    bool onFrontier(std::size_t index) const;

    /// kLegitThrottled, kAttackerAdmitted, then the scenario's summary metrics (sim::metricNames).
    QStringList metrics() const;
    /// The cell's value of `metric` (metrics()); nullopt for a cell not run or whose policy does
    /// not validate.
    std::optional<double> metricValue(std::size_t index, const QString& metric) const;
    /// What hovering shows: the cell's numbers, both trade-off figures, `metric`, and whether
    /// every expectation holds (or why the cell's policy does not validate).
    QString cellSummary(std::size_t index, const QString& metric) const;

    /// Writes the cell's numbers into `document` (every policy the axes name), as the editor
    /// would, in one undo step named `change`. Returns false with `error` set when the document
    /// cannot take them.
    bool loadCellInto(std::size_t index, PolicyDocument& document, const QString& change,
                      std::string& error) const;

signals:
    void started();
    /// A cell has run; cellsDone() counts it.
    void cellFinished(std::size_t index);
    /// Every cell has run: decision() is set.
    void finished();
    void cancelled();

private:
    struct Job;
    void takeCell(const std::shared_ptr<Job>& job, std::size_t index, sim::SweepCell cell);

    QThreadPool pool_;
    std::shared_ptr<Job> job_;
    State state_ = State::Empty;
    sim::Scenario scenario_;
    PolicySet policies_;
    std::vector<sim::SweepAxis> axes_;
    std::vector<std::vector<double>> axisValues_;
    std::vector<std::vector<double>> grid_;
    std::vector<std::optional<sim::SweepCell>> cells_;
    std::size_t done_ = 0;
    std::optional<sim::TradeoffMap> decision_;
};

}  // namespace ratelab::gui
