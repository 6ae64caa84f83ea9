#pragma once

// Shared by the access-log suites (tst_access_log: formats, identity and decisions;
// tst_log_reading: logs as they are stored, and damaged): the fixtures of tests/data/logs, logs
// written to a temporary folder, and a replay that records what was decided for each line.

#include <QObject>
#include <QTemporaryDir>

#include <zlib.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/access_log.h"
#include "sim/scenario_runner.h"

namespace ratelab::simtest {

using namespace ratelab::sim;

inline std::string fixture(const char* name) {
    return std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/" + name;
}

inline std::shared_ptr<RecordedTraffic> load(std::vector<std::string> files, LogReading& reading,
                                             std::optional<LogFormat> format = std::nullopt,
                                             Nanos window = 60 * kNanosPerSecond) {
    ReplayInput input;
    input.files = std::move(files);
    if (format) input.format = LogFormatOptions{*format, {}, {}};
    input.reorderWindow = window;
    return loadAccessLog(input, reading);
}

inline std::vector<std::int64_t> lineOrder(const RecordedTraffic& t) {
    std::vector<std::int64_t> lines;
    for (const RecordedRequest& r : t.requests)
        lines.push_back(r.line);
    return lines;
}

inline std::vector<std::int64_t> noteLines(const std::vector<LineNote>& notes) {
    std::vector<std::int64_t> lines;
    for (const LineNote& n : notes)
        lines.push_back(n.line);
    return lines;
}

struct Decisions final : DecisionSink {
    std::vector<std::string> keys;
    std::vector<std::string> clients;
    std::vector<int> statuses;
    std::vector<std::pair<std::uint32_t, std::int64_t>> lines;
    void onDecision(const DecisionRecord& d) override {
        keys.emplace_back(d.key);
        clients.emplace_back(d.client);
        statuses.push_back(d.status);
        lines.emplace_back(d.logFile, d.logLine);
    }
};

inline Decisions replay(std::shared_ptr<const RecordedLog> log, const PolicySet& policies,
                        RunTotals* totals = nullptr) {
    Decisions sink;
    RunnerOptions options;
    options.decisions = &sink;
    ScenarioRunner runner(makeReplayScenario(std::move(log), kNanosPerSecond), policies, options);
    runner.runToEnd();
    if (totals) *totals = runner.totals();
    return sink;
}

/// The suites' base: logs written into a folder of their own.
class LogFileTest : public QObject {
protected:
    std::string write(const char* name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    std::string writeGzip(const char* name, const std::string& text) {
        const std::string path = dir_.filePath(name).toStdString();
        gzFile f = gzopen(path.c_str(), "wb");
        gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
        gzclose(f);
        return path;
    }
    QTemporaryDir dir_;
};

}  // namespace ratelab::simtest
