#include "cli/decision_csv.h"

#include <cinttypes>

namespace ratelab::cli {

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out) : out_(out) {
    buffer_.reserve(1 << 20);
    buffer_ = "seq,ts_ms,key,allowed,remaining,retry_after_ms\n";
}

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out, const sim::LogReading* reading)
    : out_(out), reading_(reading) {
    buffer_.reserve(1 << 20);
    buffer_ = "seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line\n";
}

namespace {

void appendCsvField(std::string& out, std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(field);
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

}  // namespace

void DecisionCsvWriter::onDecision(const sim::DecisionRecord& d) {
    const std::int64_t tsMs = sim::recordMillis(reading_, d.at);
    char line[96];
    int n = std::snprintf(line, sizeof line, "%" PRId64 ",%" PRId64 ",", d.seq, tsMs);
    buffer_.append(line, static_cast<std::size_t>(n));
    appendCsvField(buffer_, d.key);
    const std::int64_t retryMs = ceilMillis(d.retryAfter);
    if (d.remaining >= 0) {
        n = std::snprintf(line, sizeof line, ",%s,%" PRId64 ",%" PRId64,
                          d.allowed ? "true" : "false", d.remaining, retryMs);
    } else {
        n = std::snprintf(line, sizeof line, ",%s,,%" PRId64, d.allowed ? "true" : "false",
                          retryMs);
    }
    buffer_.append(line, static_cast<std::size_t>(n));
    if (reading_) {
        buffer_.push_back(',');
        if (d.logFile < reading_->files.size()) appendCsvField(buffer_, reading_->files[d.logFile]);
        n = std::snprintf(line, sizeof line, ",%" PRId64, d.logLine);
        buffer_.append(line, static_cast<std::size_t>(n));
    }
    buffer_.push_back('\n');
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
