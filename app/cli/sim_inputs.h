#pragma once

// Shared by run, replay and sweep: loading inputs with FILE:LINE:COLUMN diagnostics on stderr,
// writing outputs, and the decisions file.

#include <QCommandLineParser>
#include <QString>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"
#include "ratelab/store.h"
#include "sim/access_log.h"
#include "sim/log_stream.h"
#include "sim/metrics.h"
#include "sim/scenario.h"

namespace ratelab::cli {

/// Prints each diagnostic on stderr ("FILE:LINE:COLUMN: error: ..."); warnings only when
/// `warnings`. Returns whether any is an error.
bool printDiagnostics(const std::vector<Diagnostic>& diagnostics, bool warnings = true);

/// Loads a scenario, printing its diagnostics. Nullopt on any error.
std::optional<sim::Scenario> loadScenario(const std::string& path, bool warnings = true);

/// Loads and validates a policy file, printing its diagnostics. Nullopt on any error.
std::optional<PolicySet> loadPolicy(const std::string& path, bool warnings = true);

/// Parses the command line with QCommandLineParser::parse(); on a bad option or a missing
/// positional argument prints "ratelab-cli CMD: what is wrong" and the usage, and returns false.
/// `positionals` is the exact count, or when negative, the least. `--help` prints the help and
/// exits 0.
bool parseCommandLine(QCommandLineParser& parser, const QStringList& arguments, const char* command,
                      const char* synopsis, int positionals);

/// "ratelab-cli CMD: message" on stderr; returns kBadInput.
int badInput(const char* command, const std::string& message);
/// The same for a wrong command line; returns kUsage.
int usageError(const char* command, const std::string& message);

/// How the logs of `replay` and `fit` are read: the positional files and --format, --log-format,
/// --field, --reorder-window. One set of options, so the two commands read logs alike.
class LogInputOptions {
public:
    LogInputOptions();
    void addTo(QCommandLineParser& parser) const;
    /// The input the command line names; nullopt with `error` set when an option is wrong.
    std::optional<sim::ReplayInput> read(const QCommandLineParser& parser,
                                         std::string& error) const;
    static constexpr const char* kSynopsis =
        "[--format combined|common|csv|nginx|caddy|json] [--log-format 'STRING'] "
        "[--field ROLE=PATH]... [--reorder-window SECONDS]";

private:
    QCommandLineOption format_, logFormat_, field_, window_;
};

/// Writes `text` to `path` ("-" is stdout). False with `error` set when it cannot.
bool writeTextFile(const std::string& path, std::string_view text, std::string& error);

/// A store for `--store`: "memory" gives null (the scenario's own memory stores); a
/// redis:// URL connects to that Redis in caller-time mode. Nullopt with `error` set otherwise.
std::optional<std::shared_ptr<Store>> storeFromOption(const std::string& option,
                                                      std::string& error);

/// Reads an access log for a replay (`format` empty: guessed), printing the first unparsed lines
/// and their count on stderr. Null, with the reason printed as `command`'s error, when the
/// file cannot be read or holds no request.
std::shared_ptr<const sim::RecordedTraffic> loadRecordedTraffic(const std::string& path,
                                                                const std::string& format,
                                                                const char* command);

/// `--seed N`: a whole number >= 0. Nullopt with `error` set otherwise.
std::optional<std::uint64_t> parseSeed(const std::string& text, std::string& error);

/// "1.23M", "456k", "789": a count for a progress line.
std::string shortCount(double value);

/// Streams decisions as CSV `seq,ts_ms,key,allowed,remaining,retry_after_ms` with a large
/// buffer; a replay's rows add `file,line`, the log line each request came from.
class DecisionCsvWriter final : public sim::DecisionSink {
public:
    /// A run: ts_ms is the virtual time.
    explicit DecisionCsvWriter(std::FILE* out);
    /// A replay: ts_ms is the logged time. `reading` must outlive the writer.
    DecisionCsvWriter(std::FILE* out, const sim::LogReading* reading);
    void onDecision(const sim::DecisionRecord& d) override;
    /// Flushes; false when any write failed.
    bool finish();

private:
    void flush();
    std::FILE* out_;
    const sim::LogReading* reading_ = nullptr;
    std::string buffer_;
    bool ok_ = true;
};

}  // namespace ratelab::cli
