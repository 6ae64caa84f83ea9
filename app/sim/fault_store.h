#pragma once

// A Store decorator that injects the scenario's timed store faults (outage by transport,
// timeout or refusal; added latency) on the virtual clock, and counts store errors. The engine
// sees an ordinary store: faults reach it exactly as a real store's would.

#include <atomic>
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
    KeyspaceStats keyspace() const override { return inner_->keyspace(); }
    std::string_view kind() const override { return inner_->kind(); }

    /// Store calls that ended in an error (injected or the wrapped store's own) so far.
    std::int64_t errors() const { return errors_.load(std::memory_order_relaxed); }
    Store& inner() const { return *inner_; }

private:
    struct Window {
        Nanos from;
        Nanos to;
        bool latency;  // store_latency rather than store_outage
        StoreFailure failure;
        Nanos added;
    };
    std::shared_ptr<Store> inner_;
    std::vector<Window> windows_;
    Nanos defaultTimeout_;
    std::atomic<std::int64_t> errors_{0};
};

}  // namespace ratelab::sim
