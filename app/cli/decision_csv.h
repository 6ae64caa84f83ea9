#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/log/record_stream.h"
#include "sim/report/counters.h"

namespace ratelab::cli {

/// Streams decisions as CSV `seq,ts_ms,key,allowed,remaining,retry_after_ms` with a large
/// buffer; a replay's rows add `file,line`, the log line each request came from.
class DecisionCsvWriter final : public sim::DecisionSink {
public:
    /// A run: ts_ms is the virtual time.
    explicit DecisionCsvWriter(std::FILE* out);
    /// A replay: ts_ms is the logged time. `reading` must outlive the writer.
    DecisionCsvWriter(std::FILE* out, const sim::LogReading* reading);
    void onDecision(const sim::DecisionRecord& d) override;
    /// Flushes; false when any write failed.
    bool finish();

private:
    void flush();
    std::FILE* out_;
    const sim::LogReading* reading_ = nullptr;
    std::string buffer_;
    bool ok_ = true;
};

}  // namespace ratelab::cli
