#pragma once

// Access logs as one time-ordered stream: several files in the order given (rotated logs,
// oldest first: access.log.2.gz access.log.1 access.log), each plain or gzip, "-" for standard
// input, sorted within a bounded reorder window. Memory is bounded by the window (and by
// kMaxReorderLines / kMaxReorderBytes), never by the log's length.
//
// Every line is accounted for: replayed, replayed with a warning (damaged), unparsed, or out
// of order by more than the window. Each kind is counted, and the first of each listed with
// FILE:LINE:COLUMN and the reason.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "ratelab/request.h"
#include "sim/log/format/line_format.h"
#include "sim/log/replay_source.h"

namespace ratelab::sim {

/// At most this many lines wait in the reorder window, and at most this many bytes of them;
/// past either the earliest is released early (a later line before it is then out of window).
inline constexpr std::size_t kMaxReorderLines = 1'000'000;
inline constexpr std::size_t kMaxReorderBytes = 256u << 20;
/// Lines listed per kind (the counts are always exact).
inline constexpr std::size_t kMaxListedLines = 1000;
/// A file none of whose first this many non-empty lines can be read is refused.
inline constexpr int kLinesBeforeRefusal = 10;
/// Lines may span at most 36,500 days: the replay's nanosecond clock cannot overflow.
inline constexpr std::int64_t kMaxSpanMicros = 100LL * 365 * 86'400'000'000;

/// What to replay.
struct ReplayInput {
    std::vector<std::string> files;  ///< in order; "-" is standard input
    /// The format; nullopt: detected from the first file's first lines.
    std::optional<LogFormatOptions> format;
    Nanos reorderWindow = 60 * kNanosPerSecond;
};

/// One line kept for the report.
struct LineNote {
    std::uint32_t file = 0;  ///< index into LogReading::files
    std::int64_t line = 0;
    int column = 0;
    std::string message;
};

/// What reading found, filled in as the stream goes; complete once it has ended.
struct LogReading {
    std::vector<std::string> files;
    std::string format;     ///< LogLineParser::describe()
    std::string detection;  ///< how the format was detected; empty when it was given
    Nanos reorderWindow = 0;
    std::int64_t lines = 0;     ///< non-empty lines read (a CSV header is not one)
    std::int64_t replayed = 0;  ///< including the damaged ones
    std::int64_t damagedCount = 0;
    std::int64_t unparsedCount = 0;
    std::int64_t outOfWindowCount = 0;
    std::vector<LineNote> damaged;  ///< the first kMaxListedLines of each kind, in file order
    std::vector<LineNote> unparsed;
    std::vector<LineNote> outOfWindow;
    std::int64_t clients = 0;           ///< distinct client fields
    std::int64_t hostNames = 0;         ///< of which host names, not addresses
    std::int64_t startEpochMicros = 0;  ///< the first replayed line's time
    std::int64_t endEpochMicros = 0;    ///< the last replayed line's time
    std::vector<std::string> warnings;  ///< about whole files: a gzip stream cut off
    /// Set when reading had to stop: a file that cannot be opened, is binary or not in the
    /// format, corrupt gzip, rotated files out of order. The replay is then refused.
    std::optional<Diagnostic> error;
    /// With `error`: a file could not be opened or read (an I/O failure, not a bad log).
    bool unreadable = false;
    bool ended = false;

    /// "FILE:LINE:COLUMN".
    std::string where(const LineNote& note) const;
};

/// The ts_ms of a decisions or flips row for a request decided `at` into the run: for a log
/// (`reading` not null), its logged time in epoch milliseconds, the first replayed line's plus
/// the virtual time since; for a scenario, the virtual time.
inline std::int64_t recordMillis(const LogReading* reading, Nanos at) {
    return reading ? (reading->startEpochMicros + at / kNanosPerMicro) / 1000 : at / kNanosPerMilli;
}

/// One replayed line. Views stay valid through one more LogStream::next() (so a caller can look
/// at the next line's time while it still uses this one) and end with the second.
struct ReplayedLine {
    std::int64_t epochMicros = 0;
    std::uint32_t file = 0;
    std::int64_t line = 0;
    std::string_view client;
    std::uint32_t clientId = 0;        ///< the client field's number: 0, 1, ... by first line read
    std::optional<IpAddress> address;  ///< unset for a host name
    std::string_view method;
    std::string_view path;
    int status = 0;
    std::span<const Header> headers;
};

/// Reads a ReplayInput as a time-ordered stream. Not thread-safe.
class LogStream {
public:
    /// `reading` receives what the stream finds; it must outlive the stream.
    LogStream(ReplayInput input, LogReading& reading);
    ~LogStream();
    LogStream(const LogStream&) = delete;
    LogStream& operator=(const LogStream&) = delete;

    /// Opens the first file and settles the format (detecting it if needed), so a caller can
    /// say which format was chosen, or refuse, before replaying. False with reading.error set.
    /// next() calls it when it was not called.
    bool start();
    /// The next line in time order; false at the end or when reading stopped (reading.error).
    bool next(ReplayedLine& out);
    /// Bytes of stored files consumed and their total (-1 when unknown): for progress bars.
    std::int64_t bytesRead() const;
    std::int64_t bytesTotal() const;
    /// bytesRead() / bytesTotal(), 0 while the total is unknown (standard input).
    double fractionRead() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The first `perKind` unparsed, damaged and out-of-window lines as warnings (FILE:LINE:COLUMN
/// and what happened to the line), in file order, then the warnings about whole files.
std::vector<Diagnostic> readingDiagnostics(const LogReading& reading, std::size_t perKind);

/// A stream as a scenario's traffic source: the replay of a log too large to hold. Opened
/// once; host names get the treatment described at makeReplayScenario.
class StreamedLog final : public RecordedLog {
public:
    explicit StreamedLog(std::shared_ptr<LogStream> stream, std::string fileName);
    /// REQUIRES: called once (a stream cannot rewind; read the log into memory to replay it
    /// twice).
    std::unique_ptr<RecordedCursor> open() const override;
    std::optional<Nanos> span() const override { return std::nullopt; }
    std::string fileName() const override { return fileName_; }
    /// Kept as the replay goes: memory grows with the clients.
    std::string clientName(std::int64_t instance) const override;

private:
    std::shared_ptr<LogStream> stream_;
    std::string fileName_;
    std::shared_ptr<std::vector<std::string>> clientNames_;  // by instance
};

/// The peer a host-name client is replayed from: fd00::/8 and 120 bits of a hash of the name,
/// so peer-keyed policies see one client per name at any IPv6 prefix (collisions at /64 need
/// about 2^28 names).
IpAddress syntheticPeer(std::string_view hostName);

}  // namespace ratelab::sim
