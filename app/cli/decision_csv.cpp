#include "cli/decision_csv.h"

#include <cinttypes>

namespace ratelab::cli {

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out, std::int64_t epochMs)
    : out_(out), epochMs_(epochMs) {
    buffer_.reserve(1 << 20);
    buffer_ = "seq,ts_ms,key,allowed,remaining,retry_after_ms\n";
}

void DecisionCsvWriter::onDecision(const sim::DecisionRecord& d) {
    char line[96];
    int n = std::snprintf(line, sizeof line, "%" PRId64 ",%" PRId64 ",", d.seq,
                          epochMs_ + d.at / kNanosPerMilli);
    buffer_.append(line, static_cast<std::size_t>(n));
    if (d.key.find_first_of(",\"\n") != std::string_view::npos) {
        buffer_.push_back('"');
        for (char c : d.key) {
            if (c == '"') buffer_.push_back('"');
            buffer_.push_back(c);
        }
        buffer_.push_back('"');
    } else {
        buffer_.append(d.key);
    }
    if (d.remaining >= 0) {
        n = std::snprintf(line, sizeof line, ",%s,%" PRId64 ",%" PRId64 "\n",
                          d.allowed ? "true" : "false", d.remaining,
                          (d.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    } else {
        n = std::snprintf(line, sizeof line, ",%s,,%" PRId64 "\n", d.allowed ? "true" : "false",
                          (d.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli);
    }
    buffer_.append(line, static_cast<std::size_t>(n));
    if (buffer_.size() >= (1u << 20) - 512) flush();
}

void DecisionCsvWriter::flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
        ok_ = false;
    }
    buffer_.clear();
}

bool DecisionCsvWriter::finish() {
    flush();
    if (std::fflush(out_) != 0) ok_ = false;
    return ok_;
}

}  // namespace ratelab::cli
