#include "gui/session/simulation_session.h"

#include <QElapsedTimer>

#include <algorithm>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace ratelab::gui {

namespace {

// Runs on the simulation thread as it starts. A run as fast as possible keeps a core busy;
// a slightly lower scheduling weight (nice +5) lets the GUI thread win the CPU whenever it
// wakes, even when the machine has no core to spare. QThread::setPriority cannot do this on
// Linux: under SCHED_OTHER it has a single priority level.
void lowerSimulationPriority() {
#ifdef __linux__
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 5);
#endif
}

}  // namespace

SimulationSession::SimulationSession(WallClock clock, QObject* parent)
    : QObject(parent), frameTimer_(this) {
    worker_ = new SimulationWorker(std::move(clock));
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &SimulationWorker::batchReady, this, &SimulationSession::receive,
            Qt::QueuedConnection);
    thread_.setObjectName("ratelab-simulation");
    connect(&thread_, &QThread::started, &thread_, lowerSimulationPriority, Qt::DirectConnection);
    thread_.start();

    frameTimer_.setInterval(kFrameMs);
    connect(&frameTimer_, &QTimer::timeout, this, &SimulationSession::drain);
    frameTimer_.start();
}

SimulationSession::~SimulationSession() {
    worker_->interrupt();
    thread_.quit();
    thread_.wait();
}

void SimulationSession::load(RunSetup setup) {
    const std::uint64_t generation = ++generation_;
    SimulationWorker* w = worker_;
    w->interrupt();
    QMetaObject::invokeMethod(
        w,
        [w, setup = std::move(setup), generation]() mutable {
            w->load(std::move(setup), generation);
        },
        Qt::QueuedConnection);
    // Batches of the previous run still in flight are dropped by generation in receive().
    hasPending_ = false;
    pending_ = SimBatch{};
}

void SimulationSession::play() {
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w] { w->play(); }, Qt::QueuedConnection);
}

void SimulationSession::pause() {
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w] { w->pause(); }, Qt::QueuedConnection);
}

void SimulationSession::step() {
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w] { w->step(); }, Qt::QueuedConnection);
}

void SimulationSession::setSpeed(double multiple) {
    speed_ = multiple;
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w, multiple] { w->setSpeed(multiple); }, Qt::QueuedConnection);
}

void SimulationSession::retune(std::size_t policyIndex, const PolicyTuning& tuning) {
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w, policyIndex, tuning] { w->retune(policyIndex, tuning); }, Qt::QueuedConnection);
}

void SimulationSession::highlightClient(std::int64_t instance) {
    SimulationWorker* w = worker_;
    QMetaObject::invokeMethod(
        w, [w, instance] { w->highlightClient(instance); }, Qt::QueuedConnection);
}

void SimulationSession::receive(SimBatch batch) {
    if (batch.generation != generation_) return;  // from a run that was replaced
    if (!hasPending_) {
        pending_ = std::move(batch);
        hasPending_ = true;
    } else {
        pending_.absorb(std::move(batch), kLogPerFrame);
    }
}

void SimulationSession::drain() {
    if (!hasPending_) return;
    SimBatch batch = std::move(pending_);
    pending_ = SimBatch{};
    hasPending_ = false;

    if (batch.fresh) {
        shape_ = batch.shape;
        emit runLoaded(shape_);
    }
    now_ = batch.now;
    requests_ = batch.requests;
    wallSeconds_ = batch.wallSeconds;
    QElapsedTimer cost;
    cost.start();
    emit frame(batch);
    const std::int64_t nanos = cost.nsecsElapsed();
    frameStats_.frames += 1;
    frameStats_.totalNanos += nanos;
    frameStats_.maxNanos = std::max(frameStats_.maxNanos, nanos);
    frameStats_.lastNanos = nanos;
    if (!batch.message.empty()) {
        const QString text = QString::fromStdString(batch.message);
        if (batch.state == RunState::Failed) {
            emit failed(text);
        } else {
            emit message(text);
        }
    }
    if (batch.state != state_) {
        state_ = batch.state;
        emit stateChanged(state_);
    }
}

}  // namespace ratelab::gui
