#include "sim/log/rereader.h"

#include <utility>

#include "sim/log/recorded_traffic.h"  // makeReplayScenario

namespace ratelab::sim {

LogRereader::LogRereader(ReplayInput input) : given_(input), input_(std::move(input)) {}

std::shared_ptr<LogStream> LogRereader::open(LogReading& reading) {
    for (std::string& f : input_.files) {
        if (f != "-") continue;
        if (!spool_) {
            std::string error;
            spool_ = SpooledStdin::make(error);
            if (!spool_) {
                reading = LogReading{};
                reading.files = given_.files;
                reading.error = Diagnostic{Diagnostic::Severity::Error, "-", 0, 0, "", error};
                reading.unreadable = true;
                return nullptr;
            }
        }
        f = spool_->path();
    }
    auto stream = std::make_shared<LogStream>(input_, reading);
    if (!stream->start()) {
        nameAsGiven(reading);
        return nullptr;
    }
    return stream;
}

Scenario LogRereader::scenario(std::shared_ptr<LogStream> stream, Nanos sampleInterval) const {
    return makeReplayScenario(
        std::make_shared<StreamedLog>(std::move(stream), given_.files.front()), sampleInterval);
}

void LogRereader::nameAsGiven(LogReading& reading) const {
    reading.files = given_.files;
    if (reading.error && spool_ && reading.error->file == spool_->path()) reading.error->file = "-";
}

Diagnostic LogRereader::changed(const char* doing, std::int64_t first, std::int64_t second) const {
    return Diagnostic{Diagnostic::Severity::Error,
                      given_.files.front(),
                      0,
                      0,
                      "",
                      std::string("the log changed while it was ") + doing + ": " +
                          std::to_string(first) + " requests on the first reading, " +
                          std::to_string(second) + " on the second"};
}

}  // namespace ratelab::sim
