#include "gui/session/simulation_worker.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace ratelab::gui {

namespace {

// advance() is called with this many requests at most, and at least this few, whatever the
// measured cost per request says.
constexpr std::int64_t kMinChunk = 256;
constexpr std::int64_t kMaxChunk = 1 << 20;
// Each advance() call aims at about this much wall time, so a slice overshoots its budget by
// little and commands wait little.
constexpr Nanos kChunkTarget = 2 * kNanosPerMilli;
// Paced runs tick this often (ms); the virtual target follows the wall clock between ticks.
constexpr int kPacedTickMs = 10;

}  // namespace

Nanos steadyNanos() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

SimulationWorker::SimulationWorker(WallClock clock) : clock_(std::move(clock)), ticker_(this) {
    ticker_.setTimerType(Qt::CoarseTimer);
    connect(&ticker_, &QTimer::timeout, this, &SimulationWorker::tick);
}

SimulationWorker::~SimulationWorker() = default;

void SimulationWorker::load(RunSetup setup, std::uint64_t generation) {
    ticker_.stop();
    runner_.reset();
    replayActor_ = -1;
    highlight_ = -1;
    generation_ = generation;
    wallSpent_ = 0;
    interrupted_.store(false, std::memory_order_relaxed);

    SimBatch batch;
    batch.generation = generation_;
    batch.fresh = true;
    RunShape& shape = batch.shape;
    shape.scenarioName = setup.scenario.name;
    shape.scenarioTitle = setup.scenario.title;
    shape.classNames = setup.scenario.classNames();
    shape.duration = setup.scenario.duration;
    shape.sampleInterval = setup.scenario.sampleInterval;
    shape.events = setup.scenario.events;
    shape.actors = setup.scenario.actors;
    for (sim::Actor& a : shape.actors)
        a.recorded.reset();
    shape.policies = setup.policies;

    std::string error;
    sim::RunnerOptions options;
    options.seed = setup.seed;
    options.logCapacity = kLogPerBatch;
    // A replay keeps each client's counts per interval, for the client the user highlights.
    options.clientTimelines =
        std::any_of(setup.scenario.actors.begin(), setup.scenario.actors.end(),
                    [](const sim::Actor& a) { return a.recorded != nullptr; });
    if (!setup.compare)
        options.store = makeChosenStore(setup.store, setup.policies.store.keyNamespace, error);
    if (!error.empty()) {
        state_ = RunState::Failed;
        batch.state = state_;
        batch.message = error;
        emit batchReady(std::move(batch));
        return;
    }
    shape.storeKind = options.store ? "redis" : "memory";
    if (setup.compare) {
        shape.laneLabels = {setup.compare->labelA, setup.compare->labelB};
        std::vector<PolicySet> lanes;
        lanes.push_back(std::move(setup.compare->reference));
        lanes.push_back(std::move(setup.policies));
        runner_ = std::make_unique<sim::ScenarioRunner>(std::move(setup.scenario), std::move(lanes),
                                                        std::move(options));
    } else {
        runner_ = std::make_unique<sim::ScenarioRunner>(
            std::move(setup.scenario), std::move(setup.policies), std::move(options));
    }
    state_ = RunState::Ready;
    batch.state = state_;
    batch.actors = runner_->actorRows(editedLane());
    const auto& actors = runner_->scenario().actors;
    for (std::size_t i = 0; i < actors.size() && replayActor_ < 0; ++i) {
        if (actors[i].recorded) replayActor_ = static_cast<int>(i);
    }
    if (replayActor_ >= 0) batch.clients = clientRows();
    if (runner_->laneCount() > 1) {
        batch.comparison = std::make_shared<const sim::Comparison>(
            sim::buildComparison(*runner_, kComparisonTop, sim::Timing{}));
    }
    lastEmit_ = clock_();
    nextComparison_ = lastEmit_ + kComparisonInterval;
    nextClients_ = lastEmit_ + kClientsInterval;
    emit batchReady(std::move(batch));
}

void SimulationWorker::play() {
    if (!runner_ || state_ == RunState::Running) return;
    if (runner_->finished()) {
        setState(RunState::Finished);
        return;
    }
    anchorPace();
    ticker_.start(speed_ > 0 ? kPacedTickMs : 0);
    setState(RunState::Running);
}

void SimulationWorker::pause() {
    if (state_ != RunState::Running) return;
    ticker_.stop();
    setState(RunState::Paused);
}

void SimulationWorker::step() {
    if (!runner_ || runner_->finished()) return;
    ticker_.stop();
    const Nanos target = std::min(runner_->now() + runner_->sampleInterval(), runner_->duration());
    // No deadline: a step is one user action and ends where it must. interrupt() still stops it.
    advanceTowards(target, std::numeric_limits<Nanos>::max());
    setState(runner_->finished() ? RunState::Finished : RunState::Paused);
}

void SimulationWorker::setSpeed(double multiple) {
    speed_ = multiple > 0 ? std::clamp(multiple, 1.0, 1000.0) : 0.0;
    if (state_ == RunState::Running) {
        anchorPace();
        ticker_.start(speed_ > 0 ? kPacedTickMs : 0);
    }
}

void SimulationWorker::retune(std::size_t policyIndex, const PolicyTuning& tuning) {
    if (!runner_ || policyIndex >= runner_->policies(editedLane()).policies.size()) return;
    runner_->retune(policyIndex, tuning, editedLane());
}

void SimulationWorker::highlightClient(std::int64_t instance) {
    highlight_ = instance;
    if (!runner_ || replayActor_ < 0) return;
    traced_.assign(runner_->laneCount(), 0);
    emitBatch();
}

ClientTrace SimulationWorker::takeTrace() {
    ClientTrace trace;
    trace.instance = highlight_;
    const auto actor = static_cast<std::size_t>(replayActor_);
    for (std::size_t l = 0; l < runner_->laneCount(); ++l) {
        const std::span<const sim::ClientInterval> line =
            runner_->clientTimeline(actor, highlight_, l);
        // The last interval sent may have grown since: sent again.
        const std::size_t from = traced_[l] > 0 ? traced_[l] - 1 : 0;
        trace.from.push_back(from);
        trace.lanes.emplace_back(
            line.begin() + static_cast<std::ptrdiff_t>(std::min(from, line.size())), line.end());
        traced_[l] = line.size();
    }
    return trace;
}

void SimulationWorker::tick() {
    if (!runner_ || state_ != RunState::Running) {
        ticker_.stop();
        return;
    }
    const Nanos start = clock_();
    const Nanos deadline = start + kSliceBudget;
    if (speed_ > 0) {
        const double elapsed = static_cast<double>(start - anchorWall_);
        const Nanos target = anchorVirtual_ + static_cast<Nanos>(elapsed * speed_);
        advanceTowards(std::min(target, runner_->duration()), deadline);
        // Behind the wall clock (the machine cannot keep up): follow from here rather than
        // run flat out forever to catch up.
        if (runner_->now() < target && clock_() >= deadline) anchorPace();
    } else {
        advanceTowards(runner_->duration(), deadline);
    }
    if (runner_->finished()) {
        ticker_.stop();
        setState(RunState::Finished);
        return;
    }
    if (clock_() - lastEmit_ >= kBatchInterval) emitBatch();
}

void SimulationWorker::advanceTowards(Nanos until, Nanos deadline) {
    while (runner_->now() < until && !runner_->finished()) {
        if (interrupted_.load(std::memory_order_relaxed)) return;
        const Nanos before = clock_();
        const std::int64_t decided = runner_->advance(until, chunk_);
        const Nanos after = clock_();
        wallSpent_ += after - before;
        if (decided > 0) {
            const Nanos perRequest = std::max<Nanos>(1, (after - before) / decided);
            chunk_ = std::clamp<std::int64_t>(kChunkTarget / perRequest, kMinChunk, kMaxChunk);
        }
        if (after >= deadline) return;
    }
}

void SimulationWorker::setState(RunState state) {
    state_ = state;
    emitBatch(true);
}

void SimulationWorker::emitBatch(bool stateChanged) {
    SimBatch batch;
    batch.generation = generation_;
    batch.state = state_;
    if (runner_) {
        const std::size_t lane = editedLane();
        batch.samples = runner_->takeSamples(0);
        if (lane > 0) batch.samplesB = runner_->takeSamples(lane);
        batch.actors = runner_->actorRows(lane);
        batch.log = runner_->takeLog(lane);
        if (replayActor_ >= 0 && (stateChanged || clock_() >= nextClients_)) {
            batch.clients = clientRows();
            nextClients_ = clock_() + kClientsInterval;
        }
        if (replayActor_ >= 0 && highlight_ >= 0) batch.trace = takeTrace();
        batch.now = runner_->now();
        batch.requests = runner_->requests();
        // A pause, a step or the end shows exact figures at once; while running, a few a second.
        if (lane > 0 && (stateChanged || clock_() >= nextComparison_)) {
            const Nanos before = clock_();
            const double wall = static_cast<double>(wallSpent_) / 1e9;
            const sim::Timing timing{
                wall, wall > 0 ? static_cast<double>(runner_->requests()) / wall : 0};
            batch.comparison = std::make_shared<const sim::Comparison>(
                sim::buildComparison(*runner_, kComparisonTop, timing));
            const Nanos after = clock_();
            nextComparison_ =
                after + std::max(kComparisonInterval, (after - before) * kComparisonShare);
        }
    }
    batch.wallSeconds = static_cast<double>(wallSpent_) / 1e9;
    lastEmit_ = clock_();
    emit batchReady(std::move(batch));
}

std::shared_ptr<const std::vector<ClientRow>> SimulationWorker::clientRows() const {
    const auto actor = static_cast<std::size_t>(replayActor_);
    return std::make_shared<const std::vector<ClientRow>>(
        topClients(runner_->instances(actor, editedLane()),
                   runner_->clientsSeen(actor, editedLane()), kTopClients));
}

void SimulationWorker::anchorPace() {
    anchorWall_ = clock_();
    anchorVirtual_ = runner_ ? runner_->now() : 0;
}

}  // namespace ratelab::gui
