#pragma once

// Times as access logs write them, to Unix microseconds: the Common Log Format's
// "10/Oct/2000:13:55:36 -0700", ISO-8601 with an offset or Z and a fraction, and epoch seconds
// (with a fraction) or milliseconds. Integer arithmetic throughout: no float drift.

#include <cstdint>
#include <string>
#include <string_view>

namespace ratelab::sim {

/// 9999-12-31T23:59:59.999999Z: the latest time a log line may carry.
inline constexpr std::int64_t kMaxEpochMicros = 253'402'300'799'999'999;

enum class TimeSyntax : std::uint8_t {
    Clf,           ///< 10/Oct/2000:13:55:36 -0700 (nginx $time_local, Apache %t)
    Iso8601,       ///< 2000-10-10T20:55:36.25Z, 2000-10-10T13:55:36-07:00 (nginx $time_iso8601)
    EpochSeconds,  ///< 971211336.250 (nginx $msec, Caddy's ts)
    EpochMillis,   ///< 971211336250
    /// Any of the above, told apart by shape: a '/' is CLF, a '-' after four digits ISO-8601,
    /// a number epoch seconds below 10^11 and milliseconds from there on (10^11 s is the year
    /// 5138; 10^11 ms is March 1973).
    Any,
};

/// Parses `text` into Unix microseconds in [0, kMaxEpochMicros]; digits past microseconds are
/// dropped. False with `error` set ("time \"...\" is not ..."). Allocates only on failure.
bool parseLogTime(std::string_view text, TimeSyntax syntax, std::int64_t& epochMicros,
                  std::string& error);

/// Days since 1970-01-01 of a proleptic Gregorian date.
std::int64_t daysFromCivil(std::int64_t year, unsigned month, unsigned day);

}  // namespace ratelab::sim
