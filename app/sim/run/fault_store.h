#pragma once

// A Store decorator that injects the scenario's timed store faults (outage by transport,
// timeout or refusal; added latency) on the virtual clock. The engine sees an ordinary store:
// faults reach it exactly as a real store's would.

#include <cstdint>
#include <memory>
#include <vector>

#include "ratelab/store.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// Thread-safe when the wrapped store is (the fault windows are immutable).
class FaultStore final : public Store {
public:
    /// `events`: the store_outage and store_latency events that apply to this store (others
    /// are ignored). `defaultTimeout` stands in when a request carries no timeout.
    FaultStore(std::shared_ptr<Store> inner, const std::vector<ScenarioEvent>& events,
               Nanos defaultTimeout = 500 * kNanosPerMilli);

    ConsumeResult consume(const ConsumeRequest& request) override;
    /// Runs of requests outside every fault window go to the wrapped store's batch path.
    void consumeBatch(std::span<const ConsumeRequest> requests,
                      std::span<ConsumeResult> results) override;
    /// A settle inside a fault window fails as a consumption there would (never applied);
    /// outside every window it reaches the wrapped store.
    SettleResult settle(const SettleRequest& request) override;
    void settleBatch(std::span<const SettleRequest> requests,
                     std::span<SettleResult> results) override;
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    KeyspaceStats keyspaceAt(Nanos now) const override { return inner_->keyspaceAt(now); }
    std::string_view kind() const override { return inner_->kind(); }

    /// Whether any fault window applies: without one, the runner need not wrap the store.
    bool hasFaults() const { return !windows_.empty(); }
    Store& inner() const { return *inner_; }

private:
    struct Window {
        Nanos from;
        Nanos to;
        bool latency;  // store_latency rather than store_outage
        StoreFailure failure;
        Nanos added;
    };
    // Consumptions and settles alike: both carry the caller's time and timeout.
    template <class Request>
    Nanos timeoutOf(const Request& r) const {
        return r.timeout > 0 ? r.timeout : defaultTimeout_;
    }
    template <class Request>
    const Window* activeFault(const Request& request) const {
        return activeFault(request.now, timeoutOf(request));
    }
    const Window* activeFault(Nanos now, Nanos timeout) const;
    ConsumeResult injected(const Window& w, Nanos timeout) const;
    // Runs of requests outside every fault window go to `pass` (the wrapped store's batch);
    // each one inside a window is answered by `fail`.
    template <class Request, class Result, class Pass, class Fail>
    void splitBatch(std::span<const Request> requests, std::span<Result> results, Pass pass,
                    Fail fail) const;

    std::shared_ptr<Store> inner_;
    std::vector<Window> windows_;
    Nanos defaultTimeout_;
};

}  // namespace ratelab::sim
