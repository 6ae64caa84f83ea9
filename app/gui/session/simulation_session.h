#pragma once

// The GUI thread's side of the simulation: owns the worker thread, forwards commands to the
// worker as queued invocations, collects the worker's batches as they arrive (cheap: a merge)
// and hands the views one merged batch per frame, on a ~33 ms timer.

#include <QObject>
#include <QThread>
#include <QTimer>

#include <cstdint>

#include "gui/session/sim_batch.h"
#include "gui/session/simulation_worker.h"

namespace ratelab::gui {

/// GUI thread only. Never blocks, except the destructor, which waits for the worker to end its
/// current chunk (about 2 ms of work).
class SimulationSession : public QObject {
    Q_OBJECT

public:
    static constexpr int kFrameMs = 33;
    /// Log entries a frame carries at most (the views keep their own bounded history).
    static constexpr std::size_t kLogPerFrame = 1000;

    explicit SimulationSession(WallClock clock = steadyNanos, QObject* parent = nullptr);
    ~SimulationSession() override;

    /// Builds a new run on the worker (the previous one is dropped). runLoaded() follows.
    void load(RunSetup setup);
    void play();
    void pause();
    void step();
    /// Times real time (1..1000), or <= 0 for as fast as possible.
    void setSpeed(double multiple);
    /// Sends a policy's tunable fields to the running engine (SimulationWorker::retune); ask
    /// canRetune() first. REQUIRES: the tuned policy validates.
    void retune(std::size_t policyIndex, const PolicyTuning& tuning);
    /// Highlights a replay's client (SimulationWorker::highlightClient); -1 none.
    void highlightClient(std::int64_t instance);

    RunState state() const { return state_; }
    double speed() const { return speed_; }
    /// Virtual time of the newest frame.
    Nanos now() const { return now_; }
    std::int64_t requests() const { return requests_; }
    double wallSeconds() const { return wallSeconds_; }
    /// The current run's shape (empty before the first load).
    const RunShape& shape() const { return shape_; }
    std::uint64_t generation() const { return generation_; }

    /// What drawing costs the GUI thread: the time every view took to handle a frame.
    struct FrameStats {
        std::int64_t frames = 0;
        std::int64_t totalNanos = 0;
        std::int64_t maxNanos = 0;
        std::int64_t lastNanos = 0;
    };
    const FrameStats& frameStats() const { return frameStats_; }

signals:
    /// A new run was built (or failed to build): views reset their series and tables.
    void runLoaded(const ratelab::gui::RunShape& shape);
    /// Everything since the previous frame, merged. Emitted at most once per kFrameMs.
    void frame(const ratelab::gui::SimBatch& batch);
    void stateChanged(ratelab::gui::RunState state);
    /// A notice from the worker, to show the user.
    void message(const QString& text);
    /// The run could not be built (e.g. a Redis server that cannot be reached), and why.
    void failed(const QString& reason);

private:
    void receive(SimBatch batch);
    void drain();

    QThread thread_;
    SimulationWorker* worker_ = nullptr;  // lives on thread_; deleted when it finishes
    QTimer frameTimer_;
    SimBatch pending_;
    bool hasPending_ = false;
    std::uint64_t generation_ = 0;
    RunShape shape_;
    RunState state_ = RunState::Empty;
    double speed_ = 1.0;
    Nanos now_ = 0;
    std::int64_t requests_ = 0;
    double wallSeconds_ = 0;
    FrameStats frameStats_;
};

}  // namespace ratelab::gui
