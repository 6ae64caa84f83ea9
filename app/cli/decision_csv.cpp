#include "cli/decision_csv.h"

namespace ratelab::cli {

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out)
    : csv_(out, "seq,ts_ms,key,allowed,remaining,retry_after_ms") {}

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out, const sim::LogReading* reading)
    : csv_(out, "seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line"), reading_(reading) {}

void DecisionCsvWriter::onDecision(const sim::DecisionRecord& d) {
    csv_.number(d.seq);
    csv_.number(sim::recordMillis(reading_, d.at));
    csv_.text(d.key);
    csv_.plain(d.allowed ? "true" : "false");
    if (d.remaining >= 0) {
        csv_.number(d.remaining);
    } else {
        csv_.plain({});
    }
    csv_.number(ceilMillis(d.retryAfter));
    if (reading_) {
        if (d.logFile < reading_->files.size()) {
            csv_.text(reading_->files[d.logFile]);
        } else {
            csv_.plain({});
        }
        csv_.number(d.logLine);
    }
    csv_.endRow();
}

bool DecisionCsvWriter::finish() {
    return csv_.finish();
}

}  // namespace ratelab::cli
