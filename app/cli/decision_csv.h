#pragma once

#include <cstdio>

#include "sim/log/record_stream.h"
#include "sim/report/counters.h"
#include "sim/report/csv_writer.h"

namespace ratelab::cli {

/// Streams decisions as CSV `seq,ts_ms,key,allowed,remaining,retry_after_ms` (sim::CsvWriter);
/// a replay's rows add `file,line`, the log line each request came from.
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
    sim::CsvWriter csv_;
    const sim::LogReading* reading_ = nullptr;
};

}  // namespace ratelab::cli
