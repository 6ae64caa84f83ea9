#pragma once

// How `replay` and `fit` read logs: the positional files and --format, --log-format, --field,
// --reorder-window. One set of options, so the two commands read logs alike.

#include <vector>

#include "cli/command.h"
#include "cli/inputs.h"
#include "sim/log_stream.h"

namespace ratelab::cli {

/// The log-reading options, for a Command's option list.
std::vector<Option> logInputOptions();

/// The input the command line names: the positional files and the options above. kUsage
/// (printed) when an option is wrong or names no usable format.
Result<sim::ReplayInput> readLogInput(const Arguments& args);

}  // namespace ratelab::cli
