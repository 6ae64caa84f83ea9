#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/metrics.h"

namespace ratelab::cli {

/// Streams decisions as CSV `seq,ts_ms,key,allowed,remaining,retry_after_ms` with a large
/// buffer. `epochMs` is added to the virtual time (a replay's start; 0 for runs).
class DecisionCsvWriter final : public sim::DecisionSink {
public:
    DecisionCsvWriter(std::FILE* out, std::int64_t epochMs);
    void onDecision(const sim::DecisionRecord& d) override;
    /// Flushes; false when any write failed.
    bool finish();

private:
    void flush();
    std::FILE* out_;
    std::int64_t epochMs_;
    std::string buffer_;
    bool ok_ = true;
};

}  // namespace ratelab::cli
