#pragma once

// The fields every JSON log line of ratelab starts with, written once here for the engine's
// log observer and for the services built on it:
//   {"time":"2024-05-01T12:34:56.789Z","level":"warn","event":"limit_hit"
// `time` is RFC 3339 in UTC with milliseconds; `level` is one of debug, info, warn, error.

#include <string>
#include <string_view>

#include "ratelab/limit.h"

namespace ratelab::observers {

/// Wall-clock nanoseconds since the Unix epoch (system_clock).
Nanos wallClockNow();

/// Appends "2024-05-01T12:34:56.789Z" (24 characters) for `unixNanos`.
void appendRfc3339(std::string& out, Nanos unixNanos);

/// Starts a log line: {"time":...,"level":...,"event":... (no closing brace).
std::string lineStart(Nanos unixNanos, std::string_view level, std::string_view event);

}  // namespace ratelab::observers
