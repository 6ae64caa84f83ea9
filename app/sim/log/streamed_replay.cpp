// StreamedLog: a LogStream as a scenario's traffic source, one pass in time order.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/log/record_stream.h"
#include "sim/log/replay_source.h"
#include "sim/traffic/traffic.h"

namespace ratelab::sim {

namespace {

// nextTime() reads the next line into next_ and writeNext() hands it out; the stream keeps the
// views of the lines it emitted last alive for a batch (RecordedCursor::writeNext). Log times
// are epoch microseconds.
class StreamCursor final : public RecordedCursor {
public:
    StreamCursor(std::shared_ptr<LogStream> stream, std::shared_ptr<std::vector<std::string>> names)
        : stream_(std::move(stream)), names_(std::move(names)) {}

    Nanos nextTime() override {
        if (!has_ && stream_) {
            has_ = stream_->next(next_);
            if (has_ && !start_) start_ = next_.epochMicros;
            if (!has_) stream_.reset();
        }
        return has_ ? (next_.epochMicros - *start_) * kNanosPerMicro : kEndOfLog;
    }

    void writeNext(RequestSlot& slot) override {
        writeReplayedRequest(next_, slot);
        // Clients numbered as a log read into memory numbers them: by first replayed request
        // (the stream numbers them by first line read, before the reorder window sorts them).
        if (next_.clientId >= instanceOf_.size()) instanceOf_.resize(next_.clientId + 1, -1);
        std::int64_t& instance = instanceOf_[next_.clientId];
        if (instance < 0) {
            instance = instances_++;
            names_->emplace_back(next_.client);
        }
        slot.instance = instance;
        has_ = false;
    }

private:
    std::shared_ptr<LogStream> stream_;
    std::shared_ptr<std::vector<std::string>> names_;  // the client field by instance
    std::vector<std::int64_t> instanceOf_;  // ReplayedLine::clientId -> instance, -1 until seen
    std::int64_t instances_ = 0;
    ReplayedLine next_;
    bool has_ = false;
    std::optional<std::int64_t> start_;
};

}  // namespace

StreamedLog::StreamedLog(std::shared_ptr<LogStream> stream, std::string fileName)
    : stream_(std::move(stream))
    , fileName_(std::move(fileName))
    , clientNames_(std::make_shared<std::vector<std::string>>()) {}

std::unique_ptr<RecordedCursor> StreamedLog::open() const {
    return std::make_unique<StreamCursor>(stream_, clientNames_);
}

std::string StreamedLog::clientName(std::int64_t instance) const {
    const auto i = static_cast<std::size_t>(instance);
    return instance >= 0 && i < clientNames_->size() ? (*clientNames_)[i] : std::string();
}

}  // namespace ratelab::sim
