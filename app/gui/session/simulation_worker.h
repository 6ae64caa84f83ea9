#pragma once

// The simulation's home on the worker thread: owns the ScenarioRunner and advances it in
// bounded slices from its own event loop, so queued commands (pause, step, retune, speed) are
// served between slices. Emits value snapshots in batches, never per request.

#include <QObject>
#include <QTimer>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "gui/session/sim_batch.h"
#include "gui/session/store_choice.h"
#include "ratelab/policy.h"
#include "sim/run/scenario_runner.h"
#include "sim/scenario/scenario.h"

namespace ratelab::gui {

/// Compare mode: a fixed reference A decided beside the run's own policies (B) on the very same
/// requests, each on its own engine and memory stores (runner lanes 0 and 1).
struct CompareSetup {
    PolicySet reference;
    std::string
        labelA;  ///< how legends and banners name A ("naive.json", "default.json as loaded")
    std::string labelB;
};

/// What a run is made of. Copied to the worker; the scenario's recorded traffic (a replayed
/// access log) is shared read-only.
struct RunSetup {
    sim::Scenario scenario;
    PolicySet policies;  ///< the editor's: B in compare mode, and what retune() changes
    StoreChoice store;   ///< must be memory in compare mode (lanes never share a store)
    std::optional<std::uint64_t> seed;
    std::optional<CompareSetup> compare;
};

/// Monotonic wall time in nanoseconds; injected so tests drive pacing with a manual clock.
using WallClock = std::function<Nanos()>;

/// The default WallClock: std::chrono::steady_clock.
Nanos steadyNanos();

/// Lives on the worker thread (moveToThread); every slot runs there. Not thread-safe except
/// interrupt(). The GUI controls it through queued invocations (SimulationSession).
class SimulationWorker : public QObject {
    Q_OBJECT

public:
    /// Batches are emitted at most this often while running (plus on every state change).
    static constexpr Nanos kBatchInterval = 30 * kNanosPerMilli;
    /// Longest the worker advances before returning to its event loop.
    static constexpr Nanos kSliceBudget = 20 * kNanosPerMilli;
    /// Limit hits and store failures kept between two batches (the newest win).
    static constexpr std::size_t kLogPerBatch = 200;
    /// Compare mode: the comparison (which walks every instance) is built at most this often
    /// while running, and never more than 1/kComparisonShare of the wall time, so a replay of
    /// many clients does not slow its own run down.
    static constexpr Nanos kComparisonInterval = 250 * kNanosPerMilli;
    static constexpr Nanos kComparisonShare = 20;
    /// A replay's client table (which walks every client) is built at most this often while
    /// running, and on every state change.
    static constexpr Nanos kClientsInterval = 250 * kNanosPerMilli;
    /// Collateral instances and changed clients a comparison lists.
    static constexpr std::size_t kComparisonTop = 50;

    explicit SimulationWorker(WallClock clock = steadyNanos);
    ~SimulationWorker() override;

    /// Thread-safe. Makes a slice in progress return at its next chunk (shutdown).
    void interrupt() { interrupted_.store(true, std::memory_order_relaxed); }

    /// Builds a new runner (and its store; a Redis store connects here, off the GUI thread)
    /// and emits a fresh batch with state Ready, or Failed with the reason.
    void load(RunSetup setup, std::uint64_t generation);
    /// Starts or resumes advancing virtual time.
    void play();
    /// Stops advancing; virtual time stays where it is.
    void pause();
    /// Pauses, then advances exactly one sample interval of virtual time (clamped to the end).
    void step();
    /// `multiple` times real time (1 to 1000), or as fast as possible when <= 0.
    void setSpeed(double multiple);
    /// Applies a policy's tunable fields to the running engine (ScenarioRunner::retune): in
    /// compare mode to B's lane, A staying as it was built.
    void retune(std::size_t policyIndex, const PolicyTuning& tuning);
    /// A replay's client `instance` (ClientRow::instance) is highlighted, -1 none: from now on
    /// each batch carries its intervals that changed (the first one all of them), and one is
    /// emitted at once.
    void highlightClient(std::int64_t instance);

signals:
    void batchReady(ratelab::gui::SimBatch batch);

private:
    void tick();
    void setState(RunState state);
    /// Advances towards `until`, in chunks, until it is reached or `deadline` (wall) passes.
    void advanceTowards(Nanos until, Nanos deadline);
    void emitBatch(bool stateChanged = false);
    void anchorPace();
    /// The replayed log's clients under the edited lane. REQUIRES: replayActor_ >= 0.
    std::shared_ptr<const std::vector<ClientRow>> clientRows() const;
    std::size_t editedLane() const { return runner_->laneCount() - 1; }
    /// The highlighted client's intervals since the previous trace. REQUIRES: highlight_ >= 0.
    ClientTrace takeTrace();

    WallClock clock_;
    QTimer ticker_;
    std::unique_ptr<sim::ScenarioRunner> runner_;
    std::uint64_t generation_ = 0;
    RunState state_ = RunState::Empty;
    double speed_ = 1.0;  // <= 0: as fast as possible
    Nanos anchorWall_ = 0;
    Nanos anchorVirtual_ = 0;
    Nanos lastEmit_ = 0;
    Nanos nextComparison_ = 0;         // wall time after which a running batch carries a comparison
    Nanos nextClients_ = 0;            // and the client table
    int replayActor_ = -1;             // the actor replaying a log, -1 when none does
    std::int64_t highlight_ = -1;      // its highlighted client, -1 none
    std::vector<std::size_t> traced_;  // per lane: the highlighted client's intervals sent
    Nanos wallSpent_ = 0;
    std::int64_t chunk_ = 4096;  // requests per advance() call, adapted to ~2 ms of work
    std::atomic<bool> interrupted_{false};
};

}  // namespace ratelab::gui
