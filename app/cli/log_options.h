#pragma once

// How `replay` and `fit` read logs: the positional files and --format, --log-format, --field,
// --reorder-window. One set of options, so the two commands read logs alike.

#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/inputs.h"
#include "sim/access_log.h"
#include "sim/log_stream.h"

namespace ratelab::cli {

/// The log-reading options, for a Command's option list.
std::vector<Option> logInputOptions();

/// The input the command line names: the positional files and the options above. kUsage
/// (printed) when an option is wrong or names no usable format.
Result<sim::ReplayInput> readLogInput(const Arguments& args);

/// "access.log", or "access.log.2.gz and 2 more": the input's files in one message.
std::string logInputName(const sim::ReplayInput& input);

/// Reads the input into memory (fit, and diff and tune, which replay it per client), with a
/// progress bar on stderr; prints the detected format (with `warnings`), the first lines of
/// each kind that did not replay whole, and why reading stopped. kIoError when a file cannot
/// be read, kInvalidInput when it is not a log in the format or no request can be read.
Result<std::shared_ptr<sim::RecordedTraffic>> readLogInMemory(const sim::ReplayInput& input,
                                                              bool warnings = true);

}  // namespace ratelab::cli
