#include "gui/tradeoff/tradeoff_run.h"

#include <algorithm>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "gui/window/locale_text.h"
#include "gui/policy/policy_document.h"
#include "sim/report/counters.h"

namespace ratelab::gui {

// What the pool threads read: a copy of the inputs, so a new map (or the run's destruction)
// never pulls them from under a cell in flight.
struct TradeoffRun::Job {
    sim::Scenario scenario;
    PolicySet policies;
    std::vector<sim::SweepAxis> axes;
    std::vector<std::vector<double>> grid;
    std::atomic<bool> cancel{false};
};

namespace {

// The cells yield to the GUI thread: on Linux a thread's nice value is its own, and at 10 the
// cells' threads weigh a tenth of the GUI thread's when both want a core, so the window keeps
// drawing while every core runs cells. An idle machine runs the cells as fast either way.
void yieldToTheGuiThread() {
#ifdef __linux__
    static thread_local bool done = false;
    if (!done) {
        setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
        done = true;
    }
#endif
}

}  // namespace

TradeoffRun::TradeoffRun(int threads, QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(std::max(1, threads));
}

TradeoffRun::~TradeoffRun() {
    if (job_) job_->cancel.store(true);
    // The cells post their results to this object: none may still be running once it is gone.
    pool_.waitForDone();
}

bool TradeoffRun::start(sim::Scenario scenario, PolicySet policies,
                        std::vector<sim::SweepAxis> axes, std::string& error) {
    if (axes.empty() || axes.size() > 2) {
        error = "a trade-off map varies one or two fields";
        return false;
    }
    std::vector<std::vector<double>> grid = sim::sweepGrid(axes, error);
    if (grid.empty()) return false;
    // Every cell's values first, as runSweep does: a bad value fails before any run.
    for (const std::vector<double>& values : grid) {
        if (!sim::applySweepValues(policies, axes, values, error)) return false;
    }
    cancel();
    auto job = std::make_shared<Job>();
    job->scenario = scenario;
    job->policies = policies;
    job->axes = axes;
    job->grid = grid;
    job_ = job;
    scenario_ = std::move(scenario);
    policies_ = std::move(policies);
    axes_ = std::move(axes);
    axisValues_.clear();
    for (const sim::SweepAxis& axis : axes_)
        axisValues_.push_back(axis.values());
    grid_ = std::move(grid);
    cells_.assign(grid_.size(), std::nullopt);
    done_ = 0;
    decision_.reset();
    state_ = State::Running;
    for (std::size_t i = 0; i < job->grid.size(); ++i) {
        pool_.start([this, job, i] {
            if (job->cancel.load(std::memory_order_relaxed)) return;
            yieldToTheGuiThread();
            std::optional<sim::SweepCell> cell = sim::runSweepCell(
                job->scenario, job->policies, job->axes, job->grid[i], &job->cancel);
            if (!cell) return;
            QMetaObject::invokeMethod(
                this, [this, job, i, c = std::move(*cell)]() mutable { takeCell(job, i, c); },
                Qt::QueuedConnection);
        });
    }
    emit started();
    return true;
}

void TradeoffRun::cancel() {
    if (!job_) return;
    job_->cancel.store(true);
    job_.reset();
    if (state_ == State::Running) {
        state_ = State::Cancelled;
        emit cancelled();
    }
}

void TradeoffRun::takeCell(const std::shared_ptr<Job>& job, std::size_t index,
                           sim::SweepCell cell) {
    if (job != job_ || index >= cells_.size() || cells_[index]) return;  // an earlier map's
    cells_[index] = std::move(cell);
    ++done_;
    emit cellFinished(index);
    if (done_ < cells_.size()) return;
    sim::SweepResult result;
    result.classNames = scenario_.classNames();
    for (std::optional<sim::SweepCell>& c : cells_)
        result.cells.push_back(*c);
    decision_ = sim::readTradeoff(scenario_, axes_, std::move(result));
    job_.reset();
    state_ = State::Finished;
    emit finished();
}

const sim::SweepCell* TradeoffRun::cell(std::size_t index) const {
    return index < cells_.size() && cells_[index] ? &*cells_[index] : nullptr;
}

bool TradeoffRun::onFrontier(std::size_t index) const {
    return decision_ && std::find(decision_->frontier.begin(), decision_->frontier.end(), index) !=
                            decision_->frontier.end();
}

QStringList TradeoffRun::metrics() const {
    QStringList names{kLegitThrottled, kAttackerAdmitted};
    for (const std::string& name : sim::metricNames(scenario_.classNames()))
        names << QString::fromStdString(name);
    return names;
}

std::optional<double> TradeoffRun::metricValue(std::size_t index, const QString& metric) const {
    const sim::SweepCell* c = cell(index);
    if (!c || !c->invalid.empty()) return std::nullopt;
    const std::vector<std::string> classes = scenario_.classNames();
    if (metric == kLegitThrottled || metric == kAttackerAdmitted) {
        const sim::TradeoffPoint p = sim::tradeoffPoint(classes, c->totals, scenario_.duration);
        return metric == kLegitThrottled ? p.legitThrottled : p.attackerAdmitted;
    }
    return sim::summaryMetric(metric.toStdString(), classes, c->totals, scenario_.duration,
                              scenario_.sampleInterval);
}

QString TradeoffRun::cellSummary(std::size_t index, const QString& metric) const {
    if (index >= grid_.size()) return {};
    QStringList lines{QString::fromStdString(sim::cellValuesText(axes_, grid_[index]))};
    const sim::SweepCell* c = cell(index);
    if (!c) {
        lines << tr("not run yet");
        return lines.join('\n');
    }
    if (!c->invalid.empty()) {
        lines << tr("not run: %1").arg(QString::fromStdString(c->invalid));
        return lines.join('\n');
    }
    const sim::TradeoffPoint p =
        sim::tradeoffPoint(scenario_.classNames(), c->totals, scenario_.duration);
    lines << tr("legitimate requests throttled: %1 %").arg(localeNumber(p.legitThrottled * 100, 4))
          << tr("attacker requests admitted: %1 per s").arg(localeNumber(p.attackerAdmitted, 5));
    if (metric != kLegitThrottled && metric != kAttackerAdmitted) {
        if (const std::optional<double> v = metricValue(index, metric))
            lines << QStringLiteral("%1: %2").arg(metric, localeNumber(*v));
    }
    const std::size_t expectations = scenario_.expectations.size();
    lines << (c->pass
                  ? tr("meets every expectation (%1)").arg(expectations)
                  : tr("fails %1 of %2 expectations").arg(c->failedExpectations).arg(expectations));
    if (onFrontier(index)) lines << tr("on the Pareto frontier");
    if (decision_ && decision_->recommended == index) lines << tr("the recommended cell");
    return lines.join('\n');
}

bool TradeoffRun::loadCellInto(std::size_t index, PolicyDocument& document, const QString& change,
                               std::string& error) const {
    if (index >= grid_.size()) {
        error = "no such cell";
        return false;
    }
    std::optional<PolicySet> set =
        sim::applySweepValues(document.policies(), axes_, grid_[index], error);
    if (!set) return false;
    document.setPolicies(std::move(set->policies), change);
    document.finishStep();  // each cell loaded is an undo step of its own
    return true;
}

}  // namespace ratelab::gui
