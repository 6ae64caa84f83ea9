#pragma once

// How the commands that read logs (replay, fit, diff, tune) read them: the positional files and
// --format, --log-format, --field, --reorder-window, and what they print about the reading. One
// set of options and one set of messages, so they read logs alike.

#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/inputs.h"
#include "sim/log/record_stream.h"

namespace ratelab::cli {

/// The log-reading options, for a Command's option list.
std::vector<Option> logInputOptions();

/// The input the command line names: the positional files and the options above. kUsage
/// (printed) when an option is wrong or names no usable format.
Result<sim::ReplayInput> readLogInput(const Arguments& args);

/// "access.log", or "access.log.2.gz and 2 more": the input's files in one message.
std::string logInputName(const sim::ReplayInput& input);

/// Opens the input as a stream (replay, diff; fit and tune read it twice, sim/log/rereader.h),
/// settling its format; prints the detected format (with `warnings`) or why it cannot be read:
/// kIoError when a file cannot be read, kInvalidInput when it is not a log in the format.
Result<std::shared_ptr<sim::LogStream>> openLogStream(const sim::ReplayInput& input,
                                                      sim::LogReading& reading, bool warnings);

/// With `warnings`, which format was detected (nothing when it was given or reading failed).
void printLogDetection(const sim::ReplayInput& input, const sim::LogReading& reading,
                       bool warnings);

/// After a reading: prints why it stopped (then kIoError or kInvalidInput) or, with
/// `warnings`, the first lines of each kind that did not replay whole; kInvalidInput when no
/// request could be read; kSuccess otherwise.
ExitCode finishLogReading(const sim::ReplayInput& input, const sim::LogReading& reading,
                          bool warnings);

}  // namespace ratelab::cli
