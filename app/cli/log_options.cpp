#include "cli/log_options.h"

#include <charconv>

#include "sim/log/format/line_format.h"

namespace ratelab::cli {

std::vector<Option> logInputOptions() {
    return {
        Option::value("format", "FORMAT",
                      sim::logFormatNames() + " (default: detected from the first lines)."),
        Option::value("log-format", "STRING",
                      "nginx: the server's log_format string (implies --format nginx)."),
        Option::value("field", "ROLE=PATH",
                      "json: where a field is, ROLE client, time, method, path, status or "
                      "header:NAME and PATH keys joined by dots (implies --format json).")
            .asRepeated(),
        Option::value("reorder-window", "SECONDS",
                      "Sort lines out of order by up to this many seconds (default 60); lines "
                      "later than that are listed, not read."),
    };
}

Result<sim::ReplayInput> readLogInput(const Arguments& args) {
    sim::ReplayInput input;
    input.files = args.positionals();
    if (args.isSet("format") || args.isSet("log-format") || args.isSet("field")) {
        sim::LogFormatOptions format;
        format.format = args.isSet("log-format") ? sim::LogFormat::Nginx
                        : args.isSet("field")    ? sim::LogFormat::Json
                                                 : sim::LogFormat::Combined;
        if (args.isSet("format")) {
            const std::string name = args.value("format");
            std::optional<sim::LogFormat> f = sim::parseLogFormat(name);
            if (!f) {
                return fail(kUsage, "--format \"" + name + "\": expected " + sim::logFormatNames());
            }
            format.format = *f;
        }
        format.nginxFormat = args.value("log-format");
        for (const std::string& field : args.values("field")) {
            std::optional<std::pair<std::string, std::string>> f = sim::parseJsonField(field);
            if (!f) {
                return fail(kUsage, "--field \"" + field +
                                        "\": expected ROLE=PATH, e.g. client=request.ip");
            }
            format.jsonFields.push_back(std::move(*f));
        }
        std::string error;
        if (!sim::LogLineParser::make(format, error)) return fail(kUsage, error);
        input.format = std::move(format);
    }
    if (args.isSet("reorder-window")) {
        double seconds = 0;
        if (!args.number("reorder-window", 0, 86'400, seconds, "seconds")) return kUsage;
        input.reorderWindow = static_cast<Nanos>(seconds * 1e9);
    }
    return input;
}

std::string logInputName(const sim::ReplayInput& input) {
    if (input.files.size() == 1) return input.files.front();
    return input.files.front() + " and " + std::to_string(input.files.size() - 1) + " more";
}

namespace {

// Lines of each kind printed on stderr; the report lists up to kMaxListedLines.
constexpr std::size_t kPrintedLines = 20;

}  // namespace

void printLogDetection(const sim::ReplayInput& input, const sim::LogReading& reading,
                       bool warnings) {
    if (warnings && !reading.error && !reading.detection.empty()) {
        std::fprintf(stderr, "%s: format %s\n", input.files.front().c_str(),
                     reading.detection.c_str());
    }
}

Result<std::shared_ptr<sim::LogStream>> openLogStream(const sim::ReplayInput& input,
                                                      sim::LogReading& reading, bool warnings) {
    auto stream = std::make_shared<sim::LogStream>(input, reading);
    if (!stream->start()) {
        printDiagnostics({*reading.error});
        return reading.unreadable ? kIoError : kInvalidInput;
    }
    printLogDetection(input, reading, warnings);
    return stream;
}

ExitCode finishLogReading(const sim::ReplayInput& input, const sim::LogReading& reading,
                          bool warnings) {
    if (reading.error) {
        printDiagnostics({*reading.error});
        return reading.unreadable ? kIoError : kInvalidInput;
    }
    printDiagnostics(sim::readingDiagnostics(reading, kPrintedLines), warnings);
    if (reading.replayed == 0) {
        return fail(kInvalidInput, logInputName(input) + ": no request could be read from the log");
    }
    return kSuccess;
}

}  // namespace ratelab::cli
