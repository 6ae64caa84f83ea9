#pragma once

// Recorded access logs as a traffic source: nginx/Apache `combined` and `common`, and CSV
// `ts_ms,key[,path[,method]]`. Lines are sorted by time, stably; lines that cannot be parsed
// are counted and listed by line number, never dropped silently.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "sim/scenario.h"

namespace ratelab::sim {

enum class LogFormat : std::uint8_t { Combined, Common, Csv };

/// "combined", "common", "csv".
std::string_view logFormatName(LogFormat format);
std::optional<LogFormat> parseLogFormat(std::string_view name);

/// One parsed line. Strings live in RecordedTraffic's tables.
struct RecordedRequest {
    Nanos at = 0;              ///< since the earliest line of the log
    std::uint32_t client = 0;  ///< index into RecordedTraffic::clients
    std::uint32_t path = 0;    ///< index into RecordedTraffic::paths
    std::uint32_t method = 0;  ///< index into RecordedTraffic::methods
    std::uint32_t line = 0;    ///< 1-based line number in the file
};

/// A distinct client field, as written in the log.
struct RecordedClient {
    std::string text;                  ///< "198.51.100.7", "2001:db8::1", "piweba3y.prodigy.com"
    std::optional<IpAddress> address;  ///< set when the text is an IP address
    /// A host name has no address; the replay gives it this one so that peer-keyed policies
    /// still see one client per name (see makeReplayScenario).
    IpAddress syntheticAddress;
};

struct UnparsedLine {
    std::int64_t line = 0;
    std::string reason;
};

struct RecordedTraffic {
    std::string file;
    LogFormat format = LogFormat::Combined;
    std::vector<RecordedRequest> requests;  ///< sorted by time; equal times keep file order
    std::vector<RecordedClient> clients;
    std::vector<std::string> paths;
    std::vector<std::string> methods;
    std::int64_t startEpochMs = 0;  ///< the earliest line's time, Unix milliseconds
    Nanos span = 0;                 ///< latest minus earliest
    std::int64_t lines = 0;         ///< non-empty lines read
    std::int64_t hostNames = 0;     ///< clients that are host names
    std::int64_t unparsedCount = 0;
    /// The first kMaxUnparsedListed unparsed lines with the reason (the count is always exact).
    std::vector<UnparsedLine> unparsed;
};

inline constexpr std::size_t kMaxUnparsedListed = 10'000;
/// A replay keeps at most this many samples; longer logs get longer samples.
inline constexpr Nanos kMaxReplaySamples = 100'000;

/// Parses a whole log held in memory. Never throws on bad lines: they are counted and listed.
/// Empty lines are skipped; a CSV header line ("ts_ms,...") on line 1 is skipped.
RecordedTraffic parseAccessLog(std::string_view text, LogFormat format, std::string_view fileName);

/// Reads and parses a file; without a format, guesses it (detectLogFormat). Nullopt with
/// `error` set when the file cannot be read.
std::optional<RecordedTraffic> loadAccessLog(const std::string& path,
                                             std::optional<LogFormat> format, std::string& error);

/// Guesses the format from the first non-empty line: CSV when it starts with digits and a
/// comma or is a "ts_ms" header, combined when the line ends with two quoted fields, else common.
LogFormat detectLogFormat(std::string_view text);

/// A scenario with one actor (class "log") replaying `traffic`: duration the log's span plus
/// one sample, no expectations. `sampleInterval` grows (to whole seconds) when the log would
/// need more than kMaxReplaySamples samples. Each line's client becomes the peer when it is an IP
/// address (the policy's prefix rules apply); a host name becomes the verified principal (so the
/// default chain keys on the name as it is) and a synthetic peer address unique to that name
/// (fd00::/8 with the client's index in bits 8..40, so peer-keyed policies see one client
/// per name at any IPv6 prefix of 40 or more).
Scenario makeReplayScenario(std::shared_ptr<const RecordedTraffic> traffic, Nanos sampleInterval);

struct ReplayInfo;  // report.h
/// How the log was read, for the report.
ReplayInfo replayInfo(const RecordedTraffic& traffic);

}  // namespace ratelab::sim
