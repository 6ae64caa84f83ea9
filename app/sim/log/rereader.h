#pragma once

// A log read more than once, each reading streamed through the replay in bounded memory: a fit
// reads it twice (its clients, then the busiest clients' gaps), a tune twice (where each request
// lands, then the tuned limits). A log given as "-" is kept in a temporary file at the first
// reading for the next ones; every reading names the files as the caller gave them.

#include <cstdint>
#include <memory>
#include <string>

#include "ratelab/limit.h"
#include "sim/log/record_stream.h"
#include "sim/scenario/scenario.h"
#include "sim/log/spooled_stdin.h"

namespace ratelab::sim {

class LogRereader {
public:
    explicit LogRereader(ReplayInput input);
    LogRereader(const LogRereader&) = delete;
    LogRereader& operator=(const LogRereader&) = delete;

    /// Starts a reading into `reading` (which must outlive the stream): the log's stream with its
    /// format settled. Null with reading.error set when the log cannot be read (or "-" cannot be
    /// kept); the files are then named as given.
    std::shared_ptr<LogStream> open(LogReading& reading);
    /// The replay scenario of a stream open() started, named after the first file as given.
    Scenario scenario(std::shared_ptr<LogStream> stream, Nanos sampleInterval) const;
    /// Names the files of `reading`, and of its error, as the caller gave them ("-", not the
    /// temporary file).
    void nameAsGiven(LogReading& reading) const;
    /// The error of a later reading that did not read what the first did: "the log changed
    /// while it was DOING: N requests on the first reading, M on the second".
    Diagnostic changed(const char* doing, std::int64_t first, std::int64_t second) const;

    const ReplayInput& given() const { return given_; }

private:
    ReplayInput given_;
    ReplayInput input_;  // "-" replaced by the spool once it is made
    std::unique_ptr<SpooledStdin> spool_;
};

}  // namespace ratelab::sim
