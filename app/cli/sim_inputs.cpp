#include "cli/sim_inputs.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstring>
#include <random>

#include "cli/command.h"
#include "ratelab/policy_file.h"
#include "ratelab/redis_store.h"

namespace ratelab::cli {

bool printDiagnostics(const std::vector<Diagnostic>& diagnostics, bool warnings) {
    bool errors = false;
    for (const Diagnostic& d : diagnostics) {
        const bool error = d.severity == Diagnostic::Severity::Error;
        errors = errors || error;
        if (error || warnings) std::fprintf(stderr, "%s\n", formatDiagnostic(d).c_str());
    }
    return errors;
}

std::optional<sim::Scenario> loadScenario(const std::string& path, bool warnings) {
    sim::ScenarioLoadResult r = sim::loadScenarioFile(path);
    if (printDiagnostics(r.diagnostics, warnings) || !r.ok()) return std::nullopt;
    return std::move(r.scenario);
}

std::optional<PolicySet> loadPolicy(const std::string& path, bool warnings) {
    PolicyLoadResult r = loadPolicyFile(path);
    if (printDiagnostics(r.diagnostics, warnings) || !r.ok()) return std::nullopt;
    return std::move(r.policies);
}

bool parseCommandLine(QCommandLineParser& parser, const QStringList& arguments, const char* command,
                      const char* synopsis, int positionals) {
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOption(help);
    QStringList withProgram = arguments;
    withProgram.prepend(QString("ratelab-cli %1").arg(command));
    const bool parsed = parser.parse(withProgram);
    if (parsed && parser.isSet(help)) {
        std::printf("usage: ratelab-cli %s\n\n%s", synopsis,
                    qPrintable(parser.helpText().section('\n', 2)));
        std::exit(kSuccess);
    }
    std::string problem;
    if (!parsed) {
        problem = parser.errorText().toStdString();
    } else if (parser.positionalArguments().size() < std::abs(positionals)) {
        problem = "missing argument";
    } else if (positionals >= 0 && parser.positionalArguments().size() > positionals) {
        problem = "unexpected argument \"" +
                  parser.positionalArguments().at(positionals).toStdString() + "\"";
    }
    if (problem.empty()) return true;
    std::fprintf(stderr, "ratelab-cli %s: %s\nusage: ratelab-cli %s\n", command, problem.c_str(),
                 synopsis);
    return false;
}

int badInput(const char* command, const std::string& message) {
    std::fprintf(stderr, "ratelab-cli %s: %s\n", command, message.c_str());
    return kBadInput;
}

int usageError(const char* command, const std::string& message) {
    std::fprintf(stderr, "ratelab-cli %s: %s\n", command, message.c_str());
    return kUsage;
}

LogInputOptions::LogInputOptions()
    : format_("format",
              "combined, common, csv, nginx, caddy or json (default: detected from the first "
              "lines).",
              "FORMAT")
    , logFormat_("log-format", "nginx: the server's log_format string (implies --format nginx).",
                 "STRING")
    , field_("field",
             "json: where a field is, ROLE=PATH with ROLE client, time, method, path, status or "
             "header:NAME and PATH keys joined by dots (implies --format json).",
             "ROLE=PATH")
    , window_("reorder-window",
              "Sort lines out of order by up to this many seconds (default 60); lines later "
              "than that are listed, not read.",
              "SECONDS") {}

void LogInputOptions::addTo(QCommandLineParser& parser) const {
    parser.addOptions({format_, logFormat_, field_, window_});
}

std::optional<sim::ReplayInput> LogInputOptions::read(const QCommandLineParser& parser,
                                                      std::string& error) const {
    sim::ReplayInput input;
    for (const QString& file : parser.positionalArguments())
        input.files.push_back(file.toStdString());
    if (std::count(input.files.begin(), input.files.end(), "-") > 1) {
        error = "standard input (-) can be given once";
        return std::nullopt;
    }
    if (parser.isSet(format_) || parser.isSet(logFormat_) || parser.isSet(field_)) {
        sim::LogFormatOptions format;
        format.format = parser.isSet(logFormat_) ? sim::LogFormat::Nginx
                        : parser.isSet(field_)   ? sim::LogFormat::Json
                                                 : sim::LogFormat::Combined;
        if (parser.isSet(format_)) {
            const std::string name = parser.value(format_).toStdString();
            std::optional<sim::LogFormat> f = sim::parseLogFormat(name);
            if (!f) {
                error = "--format \"" + name + "\": expected " + sim::logFormatNames();
                return std::nullopt;
            }
            format.format = *f;
        }
        format.nginxFormat = parser.value(logFormat_).toStdString();
        for (const QString& field : parser.values(field_)) {
            const qsizetype eq = field.indexOf('=');
            if (eq <= 0) {
                error = "--field \"" + field.toStdString() +
                        "\": expected ROLE=PATH, e.g. client=request.ip";
                return std::nullopt;
            }
            format.jsonFields.emplace_back(field.left(eq).toStdString(),
                                           field.mid(eq + 1).toStdString());
        }
        input.format = std::move(format);
    }
    if (parser.isSet(window_)) {
        bool ok = false;
        const double s = parser.value(window_).toDouble(&ok);
        if (!ok || !(s >= 0) || s > 86'400) {
            error = "--reorder-window \"" + parser.value(window_).toStdString() +
                    "\": expected 0 to 86400 seconds";
            return std::nullopt;
        }
        input.reorderWindow = static_cast<Nanos>(s * 1e9);
    }
    return input;
}

bool writeTextFile(const std::string& path, std::string_view text, std::string& error) {
    if (path == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return true;
    }
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        error = path + ": cannot write: " + std::strerror(errno);
        return false;
    }
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed) {
        error = path + ": cannot write: " + std::strerror(errno);
        return false;
    }
    return true;
}

std::optional<std::shared_ptr<Store>> storeFromOption(const std::string& option,
                                                      std::string& error) {
    if (option.empty() || option == "memory") return std::shared_ptr<Store>();
    if (!option.starts_with("redis://") && !option.starts_with("unix://")) {
        error = "--store \"" + option + "\": expected memory or redis://HOST:PORT[/DB]";
        return std::nullopt;
    }
    RedisStoreOptions options;
    options.urls = {option};
    // Redis decides on the simulator's virtual clock, and each run writes under its own
    // namespace, so runs against one server never see each other's counters.
    options.timeSource = RedisTimeSource::Caller;
    std::random_device device;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", device(), device());
    options.keyNamespace = std::string("ratelab-sim-") + suffix;
    std::string why;
    std::unique_ptr<Store> store = makeRedisStore(options, &why);
    if (!store) {
        error = "--store \"" + option + "\": " + why;
        return std::nullopt;
    }
    // Fail fast on a server that cannot be reached, rather than run a whole scenario failing
    // open: one consumption of a throwaway key in this run's namespace.
    const Limit probeLimit;
    ConsumeRequest probe;
    probe.limitId = 4095;
    probe.limitName = "probe";
    probe.limit = &probeLimit;
    probe.partition = "probe";
    probe.key = "probe";
    probe.now = kNanosPerSecond;
    const ConsumeResult result = store->consume(probe);
    if (result.status != StoreStatus::Ok) {
        error = "--store \"" + option + "\": " + result.error;
        return std::nullopt;
    }
    return std::shared_ptr<Store>(std::move(store));
}

std::shared_ptr<const sim::RecordedTraffic> loadRecordedTraffic(const std::string& path,
                                                                const std::string& format,
                                                                const char* command) {
    // Lines of each kind printed on stderr; the report lists up to kMaxListedLines.
    constexpr std::size_t kPrintedLines = 20;
    sim::ReplayInput input;
    input.files.push_back(path);
    if (!format.empty()) {
        const std::optional<sim::LogFormat> chosen = sim::parseLogFormat(format);
        if (!chosen) {
            badInput(command, "--format \"" + format + "\": expected " + sim::logFormatNames());
            return nullptr;
        }
        input.format = sim::LogFormatOptions{};
        input.format->format = *chosen;
        if (*chosen == sim::LogFormat::Nginx) input.format->nginxFormat = sim::kNginxMainFormat;
    }
    sim::LogReading reading;
    std::shared_ptr<sim::RecordedTraffic> traffic = sim::loadAccessLog(input, reading);
    if (!traffic) {
        if (reading.error) {
            printDiagnostics({*reading.error});
        } else {
            badInput(command, path + ": cannot be read");
        }
        return nullptr;
    }
    printDiagnostics(sim::readingDiagnostics(traffic->reading, kPrintedLines));
    if (traffic->requests.empty()) {
        badInput(command, path + ": no request could be read from the log");
        return nullptr;
    }
    return traffic;
}

std::optional<std::uint64_t> parseSeed(const std::string& text, std::string& error) {
    std::uint64_t seed = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
        error = "--seed \"" + text + "\": expected a whole number >= 0";
        return std::nullopt;
    }
    return seed;
}

std::string shortCount(double value) {
    char buffer[32];
    if (value >= 1e6) {
        std::snprintf(buffer, sizeof buffer, "%.2fM", value / 1e6);
    } else if (value >= 1e4) {
        std::snprintf(buffer, sizeof buffer, "%.0fk", value / 1e3);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    }
    return buffer;
}

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out) : out_(out) {
    buffer_.reserve(1 << 20);
    buffer_ = "seq,ts_ms,key,allowed,remaining,retry_after_ms\n";
}

DecisionCsvWriter::DecisionCsvWriter(std::FILE* out, const sim::LogReading* reading)
    : out_(out), reading_(reading) {
    buffer_.reserve(1 << 20);
    buffer_ = "seq,ts_ms,key,allowed,remaining,retry_after_ms,file,line\n";
}

namespace {

void appendCsvField(std::string& out, std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
        out.append(field);
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

}  // namespace

void DecisionCsvWriter::onDecision(const sim::DecisionRecord& d) {
    // A replay's time is the logged one: the first line's, plus the virtual time since.
    const std::int64_t tsMs =
        reading_ ? (reading_->startEpochMicros + d.at / 1000) / 1000 : d.at / kNanosPerMilli;
    char line[96];
    int n = std::snprintf(line, sizeof line, "%" PRId64 ",%" PRId64 ",", d.seq, tsMs);
    buffer_.append(line, static_cast<std::size_t>(n));
    appendCsvField(buffer_, d.key);
    const std::int64_t retryMs = (d.retryAfter + kNanosPerMilli - 1) / kNanosPerMilli;
    if (d.remaining >= 0) {
        n = std::snprintf(line, sizeof line, ",%s,%" PRId64 ",%" PRId64,
                          d.allowed ? "true" : "false", d.remaining, retryMs);
    } else {
        n = std::snprintf(line, sizeof line, ",%s,,%" PRId64, d.allowed ? "true" : "false",
                          retryMs);
    }
    buffer_.append(line, static_cast<std::size_t>(n));
    if (reading_) {
        buffer_.push_back(',');
        if (d.logFile < reading_->files.size()) appendCsvField(buffer_, reading_->files[d.logFile]);
        n = std::snprintf(line, sizeof line, ",%" PRId64, d.logLine);
        buffer_.append(line, static_cast<std::size_t>(n));
    }
    buffer_.push_back('\n');
    if (buffer_.size() >= (1u << 20) - 512) flush();
}

void DecisionCsvWriter::flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
        ok_ = false;
    }
    buffer_.clear();
}

bool DecisionCsvWriter::finish() {
    flush();
    if (std::fflush(out_) != 0) ok_ = false;
    return ok_;
}

}  // namespace ratelab::cli
