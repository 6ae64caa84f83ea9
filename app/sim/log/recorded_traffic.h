#pragma once

// Recorded access logs as a traffic source. The formats are in line_format.h, reading files as
// a time-ordered stream in record_stream.h; this is what a replay is built from: a log read into
// memory (for the workbench, tests, and logs replayed more than once), the replay scenario,
// and the report's account of how the log was read.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "ratelab/request.h"
#include "sim/log/format/line_format.h"
#include "sim/log/record_stream.h"
#include "sim/log/replay_source.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim {

/// One request of a log in memory. Strings are indices into RecordedTraffic's tables.
struct RecordedRequest {
    Nanos at = 0;                    ///< since the log's first replayed line
    std::uint32_t client = 0;        ///< index into RecordedTraffic::clients
    std::uint32_t method = 0;        ///< index into RecordedTraffic::strings
    std::uint32_t path = 0;          ///< index into RecordedTraffic::strings
    std::uint32_t headersBegin = 0;  ///< [begin, end) into RecordedTraffic::headers
    std::uint32_t headersEnd = 0;
    std::uint32_t file = 0;  ///< index into reading.files
    std::int64_t line = 0;   ///< 1-based line in that file
    int status = 0;          ///< 0 when not logged
};

/// A distinct client field, as written in the log.
struct RecordedClient {
    std::string text;                  ///< "198.51.100.7", "2001:db8::1", "piweba3y.prodigy.com"
    std::optional<IpAddress> address;  ///< unset for a host name
};

/// A whole log in memory, sorted by time (equal times keep file order). Immutable once loaded:
/// any number of runs (and threads) may replay it.
class RecordedTraffic final : public RecordedLog {
public:
    LogReading reading;  ///< how the log was read: counts, listed lines, the format
    std::vector<RecordedRequest> requests;
    std::vector<RecordedClient> clients;
    std::vector<std::string> strings;  ///< methods, paths, header names and values
    std::vector<std::pair<std::uint32_t, std::uint32_t>> headers;  ///< name, value in strings
    Nanos spanNanos = 0;                                           ///< the last request's `at`

    std::unique_ptr<RecordedCursor> open() const override;
    std::optional<Nanos> span() const override { return spanNanos; }
    std::string fileName() const override;
    std::string clientName(std::int64_t instance) const override;

    /// A request's line as the stream gave it (views into this object).
    ReplayedLine line(const RecordedRequest& r, std::vector<Header>& headerScratch) const;
};

/// Called now and then while a log is read: bytes of the stored files consumed and their total
/// (-1 when unknown, as for standard input). Returns false to stop reading.
using LoadProgress = std::function<bool(std::int64_t done, std::int64_t total)>;

/// Reads a whole log into memory. Null when reading stopped (the reason in result.reading
/// .error, which `reading` receives as well) or `progress` said stop.
std::shared_ptr<RecordedTraffic> loadAccessLog(const ReplayInput& input, LogReading& reading,
                                               const LoadProgress& progress = {});

/// A replay keeps at most this many samples; longer logs get longer ones.
inline constexpr std::int64_t kMaxReplaySamples = 100'000;

/// The sample interval a replay of `span` uses: `requested`, doubled until the replay needs at
/// most kMaxReplaySamples samples. (A streamed replay reaches the same interval as it goes.)
Nanos replaySampleInterval(Nanos span, Nanos requested);

/// A scenario with one actor (class "log") replaying `log`: no expectations, one request per
/// logged line, keyed by the policy's own rules (writeReplayedRequest). A log in memory gets
/// its duration and sample interval from its span; a stream ends with the sample holding its
/// last line (Scenario::endsWithTraffic).
Scenario makeReplayScenario(std::shared_ptr<const RecordedLog> log, Nanos sampleInterval);

struct ReplayInfo;  // report.h
/// How the log was read, for the report.
ReplayInfo replayInfo(const LogReading& reading);

}  // namespace ratelab::sim
