#pragma once

// A Store decorator that injects the scenario's timed store faults (outage by transport,
// timeout or refusal; added latency) on the virtual clock. The engine sees an ordinary store:
// faults reach it exactly as a real store's would.

#include <cstdint>
#include <memory>
#include <vector>

#include "ratelab/store.h"
#include "sim/scenario.h"

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
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
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
    Nanos timeoutOf(const ConsumeRequest& r) const {
        return r.timeout > 0 ? r.timeout : defaultTimeout_;
    }
    const Window* activeFault(const ConsumeRequest& request) const;
    ConsumeResult injected(const Window& w, const ConsumeRequest& request);

    std::shared_ptr<Store> inner_;
    std::vector<Window> windows_;
    Nanos defaultTimeout_;
};

}  // namespace ratelab::sim
