#pragma once

// A recorded log as one of a scenario's traffic sources: its requests in time order, written
// into the runner's request slot. Two kinds: a log read into memory (RecordedTraffic, which a
// run can replay any number of times) and a stream over files (StreamedLog, replayed once, in
// bounded memory, its span known only at its end).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ratelab/limit.h"

namespace ratelab::sim {

struct RequestSlot;  // traffic.h

/// The class (and actor) name of a replayed log's requests. A replay is the site's own traffic:
/// legitimate (isLegitimateClass), drawn as a scenario's legitimate class is.
inline constexpr std::string_view kReplayClass = "log";

/// The most requests of a recorded log a runner generates before deciding them.
inline constexpr std::size_t kRecordedBatch = 64;

/// One pass over a log's requests. Not thread-safe.
class RecordedCursor {
public:
    virtual ~RecordedCursor() = default;
    /// Time of the next request since the log's first; kEndOfLog when there is none.
    virtual Nanos nextTime() = 0;
    /// Writes the next request into `slot` and moves on. Its views stay valid while the
    /// cursor writes kRecordedBatch more requests (and looks at the time of the one after), so
    /// a runner can generate a batch before deciding it. REQUIRES: nextTime() != kEndOfLog.
    virtual void writeNext(RequestSlot& slot) = 0;

    static constexpr Nanos kEndOfLog = INT64_MAX;
};

/// A log a scenario replays.
class RecordedLog {
public:
    virtual ~RecordedLog() = default;
    /// A cursor at the first request. A streamed log can be opened once.
    virtual std::unique_ptr<RecordedCursor> open() const = 0;
    /// From the first request to the last, when known before the replay (a log in memory);
    /// nullopt for a stream.
    virtual std::optional<Nanos> span() const = 0;
    /// The log's (first) file, for the scenario's name.
    virtual std::string fileName() const = 0;
    /// The client field of the replay's `instance` as written ("198.51.100.7"); empty when no
    /// request of it was replayed (yet).
    virtual std::string clientName(std::int64_t instance) const = 0;
};

}  // namespace ratelab::sim
