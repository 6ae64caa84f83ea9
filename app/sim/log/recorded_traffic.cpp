#include "sim/log/recorded_traffic.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <unordered_map>

#include "sim/interner.h"
#include "sim/report/report.h"
#include "sim/traffic/traffic.h"

namespace ratelab::sim {

namespace {

class TrafficCursor final : public RecordedCursor {
public:
    explicit TrafficCursor(const RecordedTraffic& t) : t_(t) {}
    Nanos nextTime() override {
        return next_ < t_.requests.size() ? t_.requests[next_].at : kEndOfLog;
    }
    void writeNext(RequestSlot& slot) override {
        const RecordedRequest& r = t_.requests[next_++];
        // The request's header list lives on for the batch (RecordedCursor::writeNext).
        at_ = at_ + 1 == headers_.size() ? 0 : at_ + 1;
        writeReplayedRequest(t_.line(r, headers_[at_]), slot);
        slot.instance = r.client;
    }

private:
    const RecordedTraffic& t_;
    std::size_t next_ = 0;
    std::array<std::vector<Header>, kRecordedBatch + 1> headers_;
    std::size_t at_ = 0;
};

}  // namespace

std::unique_ptr<RecordedCursor> RecordedTraffic::open() const {
    return std::make_unique<TrafficCursor>(*this);
}

std::string RecordedTraffic::clientName(std::int64_t instance) const {
    const auto i = static_cast<std::size_t>(instance);
    return instance >= 0 && i < clients.size() ? clients[i].text : std::string();
}

std::string RecordedTraffic::fileName() const {
    return reading.files.empty() ? std::string() : reading.files.front();
}

ReplayedLine RecordedTraffic::line(const RecordedRequest& r,
                                   std::vector<Header>& headerScratch) const {
    ReplayedLine out;
    out.epochMicros = reading.startEpochMicros + r.at / 1000;
    out.file = r.file;
    out.line = r.line;
    out.client = clients[r.client].text;
    out.address = clients[r.client].address;
    out.method = strings[r.method];
    out.path = strings[r.path];
    out.status = r.status;
    headerScratch.clear();
    for (std::uint32_t i = r.headersBegin; i < r.headersEnd; ++i)
        headerScratch.push_back(Header{strings[headers[i].first], strings[headers[i].second]});
    out.headers = headerScratch;
    return out;
}

std::shared_ptr<RecordedTraffic> loadAccessLog(const ReplayInput& input, LogReading& reading,
                                               const LoadProgress& progress) {
    auto t = std::make_shared<RecordedTraffic>();
    LogStream stream(input, reading);
    Interner strings(t->strings);
    std::vector<std::string> clientTexts;
    Interner clients(clientTexts);
    ReplayedLine line;
    std::int64_t n = 0;
    while (stream.next(line)) {
        RecordedRequest r;
        r.at = (line.epochMicros - reading.startEpochMicros) * 1000;
        r.client = clients.intern(line.client);
        if (r.client == t->clients.size())
            t->clients.push_back({std::string(line.client), line.address});
        r.method = strings.intern(line.method);
        r.path = strings.intern(line.path);
        r.headersBegin = static_cast<std::uint32_t>(t->headers.size());
        for (const Header& h : line.headers)
            t->headers.emplace_back(strings.intern(h.name), strings.intern(h.value));
        r.headersEnd = static_cast<std::uint32_t>(t->headers.size());
        r.file = line.file;
        r.line = line.line;
        r.status = line.status;
        t->requests.push_back(r);
        if (progress && ++n % 65536 == 0 && !progress(stream.bytesRead(), stream.bytesTotal())) {
            return nullptr;
        }
    }
    if (reading.error) return nullptr;
    if (progress) progress(stream.bytesRead(), stream.bytesTotal());
    t->spanNanos = t->requests.empty() ? 0 : t->requests.back().at;
    t->reading = reading;
    return t;
}

Nanos replaySampleInterval(Nanos span, Nanos requested) {
    Nanos interval = requested;
    while (span / interval + 1 > kMaxReplaySamples)
        interval *= 2;
    return interval;
}

Scenario makeReplayScenario(std::shared_ptr<const RecordedLog> log, Nanos sampleInterval) {
    Scenario s;
    s.file = log->fileName();
    s.name = std::filesystem::path(s.file).filename().string();
    if (s.name.empty() || s.file == "-") s.name = "stdin";
    s.title = "Replay of " + s.name;
    s.description =
        "Requests of a recorded access log, in time order, keyed by the policy's "
        "rules from what each line recorded.";
    s.maxSamples = kMaxReplaySamples;
    if (const std::optional<Nanos> span = log->span()) {
        s.sampleInterval = replaySampleInterval(*span, sampleInterval);
        // Whole samples, and the last line (at `span`) strictly inside.
        s.duration = (*span / s.sampleInterval + 1) * s.sampleInterval;
    } else {
        s.sampleInterval = sampleInterval;
        s.duration = (kMaxSpanMicros * 1000 / sampleInterval + 2) * sampleInterval;
        s.endsWithTraffic = true;
    }
    Actor a;
    a.name = kReplayClass;
    a.className = kReplayClass;
    // One instance per distinct client, so runs count each client on its own. A stream's
    // clients are not known ahead: the runner adds them as they appear (one to start with).
    if (const auto* traffic = dynamic_cast<const RecordedTraffic*>(log.get()))
        a.count = std::max<std::int64_t>(1, static_cast<std::int64_t>(traffic->clients.size()));
    a.recorded = std::move(log);
    s.actors.push_back(std::move(a));
    return s;
}

ReplayInfo replayInfo(const LogReading& reading) {
    ReplayInfo r;
    r.file = reading.files.empty() ? std::string() : reading.files.front();
    r.files = reading.files;
    r.format = reading.format;
    r.detected = !reading.detection.empty();
    r.reorderWindowS = static_cast<double>(reading.reorderWindow) / 1e9;
    r.lines = reading.lines;
    r.parsed = reading.replayed;
    r.damaged = reading.damagedCount;
    r.unparsed = reading.unparsedCount;
    r.outOfWindow = reading.outOfWindowCount;
    for (const LineNote& u : reading.unparsed) {
        r.unparsedLines.push_back(u.line);
        r.unparsedAt.push_back(reading.where(u));
    }
    for (const LineNote& d : reading.damaged)
        r.damagedAt.push_back(reading.where(d));
    for (const LineNote& o : reading.outOfWindow)
        r.outOfWindowAt.push_back(reading.where(o));
    r.clients = reading.clients;
    r.hostNames = reading.hostNames;
    r.startEpochMs = reading.startEpochMicros / 1000;
    r.endEpochMs = reading.endEpochMicros / 1000;
    return r;
}

}  // namespace ratelab::sim
