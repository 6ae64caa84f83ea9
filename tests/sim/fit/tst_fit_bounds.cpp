// A fit never writes what the scenario loader refuses (sim/fit/log_fit.h): every log in
// tests/data/logs fitted at --top 1, 10, 100 and 10,000, under both arrival models and with
// crowds scaled, is written and read back without a diagnostic. A client seen twice a week
// apart becomes sessions with a week's idle gap, not a spacing of days.

#include <QtTest>

#include <filesystem>

#include "sim/fit/log_fit.h"
#include "sim/scenario/scenario_limits.h"
#include "sim/scenario/scenario_writer.h"

using namespace ratelab;
using namespace ratelab::sim;

namespace {

const std::string kLogs = std::string(RATELAB_SOURCE_DIR) + "/tests/data/logs/";

// Every log file the tests ship, rotated pairs as one input, oldest first.
std::vector<std::vector<std::string>> logInputs() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(kLogs)) {
        const std::string name = entry.path().filename().string();
        if (name.ends_with(".json") || name.ends_with(".py")) continue;
        names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    std::vector<std::vector<std::string>> out;
    for (const std::string& name : names) {
        if (name == "nginx-proxy.log.1.gz") continue;  // read after its older .2.gz
        if (name == "nginx-proxy.log.2.gz") {
            out.push_back({kLogs + name, kLogs + "nginx-proxy.log.1.gz"});
        } else {
            out.push_back({kLogs + name});
        }
    }
    return out;
}

std::optional<FitResult> fitFiles(const std::vector<std::string>& files, const FitOptions& options,
                                  LogReading& reading) {
    ReplayInput input;
    input.files = files;
    if (files.front().ends_with(".jsonl")) {  // JSON lines name their fields
        LogFormatOptions format;
        format.format = LogFormat::Json;
        format.jsonFields = {{"client", "client.ip"},
                             {"time", "time"},
                             {"method", "req.method"},
                             {"path", "req.path"}};
        input.format = format;
    }
    return fitScenario(input, defaultFitPolicies(), options, reading);
}

}  // namespace

class TestFitBounds : public QObject {
    Q_OBJECT

private slots:
    void everyLogLoads_data();
    void everyLogLoads();
    void clientsDaysApartAreSessions();
};

void TestFitBounds::everyLogLoads_data() {
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<int>("top");
    QTest::addColumn<int>("model");
    QTest::addColumn<double>("scale");
    for (const std::vector<std::string>& files : logInputs()) {
        QStringList list;
        for (const std::string& f : files)
            list << QString::fromStdString(f);
        const std::string name = std::filesystem::path(files.front()).filename().string();
        for (int top : {1, 10, 100, 10'000}) {
            QTest::newRow(qPrintable(QString("%1 top %2").arg(name.c_str()).arg(top)))
                << list << top << int(FitModel::Session) << 1.0;
        }
        QTest::newRow(qPrintable(QString("%1 empirical").arg(name.c_str())))
            << list << 10 << int(FitModel::Empirical) << 1.0;
        QTest::newRow(qPrintable(QString("%1 scaled 1000").arg(name.c_str())))
            << list << 1 << int(FitModel::Session) << 1000.0;
    }
}

void TestFitBounds::everyLogLoads() {
    QFETCH(QStringList, files);
    QFETCH(int, top);
    QFETCH(int, model);
    QFETCH(double, scale);
    std::vector<std::string> paths;
    for (const QString& f : files)
        paths.push_back(f.toStdString());
    FitOptions options;
    options.top = top;
    options.model = static_cast<FitModel>(model);
    options.scale = scale;
    LogReading reading;
    std::optional<FitResult> r = fitFiles(paths, options, reading);
    if (paths.front().ends_with("binary.log")) {  // not a log: refused while reading
        QVERIFY(!r);
        QVERIFY(reading.error || reading.replayed == 0);
        return;
    }
    QVERIFY2(r, reading.error ? reading.error->message.c_str() : "nothing replayed");
    const std::string text = scenarioJson(r->scenario);
    ScenarioLoadResult loaded = parseScenarioText(text, "fitted.json");
    QVERIFY2(loaded.ok(), formatDiagnostics(loaded.diagnostics).c_str());
    QCOMPARE(scenarioJson(*loaded.scenario), text);
    // The busiest clients are actors of their own, up to the number of clients.
    std::int64_t single = 0;
    std::int64_t instances = 0;
    for (const Actor& a : loaded.scenario->actors) {
        QVERIFY(a.arrival.perInstance());
        QCOMPARE(a.arrival.kind, model == int(FitModel::Session) ? Arrival::Kind::Session
                                                                 : Arrival::Kind::Empirical);
        single += a.name.starts_with("client-") ? 1 : 0;
        instances += a.count;
    }
    QCOMPARE(single, std::min<std::int64_t>(top, r->clients));
    // Crowds stay crowds of individuals: as many instances as clients, times the scale.
    const double crowd = static_cast<double>(r->clients - single) * scale;
    QVERIFY2(std::abs(static_cast<double>(instances - single) - crowd) <=
                 static_cast<double>(loaded.scenario->actors.size()),
             qPrintable(QString("%1 instances for %2").arg(instances - single).arg(crowd)));
}

void TestFitBounds::clientsDaysApartAreSessions() {
    LogReading reading;
    FitOptions options;
    options.top = 10'000;
    std::optional<FitResult> r = fitFiles({kLogs + "week-apart.log"}, options, reading);
    QVERIFY(r);
    // The form bot: two posts in one second, then one every 42.5 hours, then a week later.
    const auto bot = std::find_if(
        r->scenario.actors.begin(), r->scenario.actors.end(),
        [](const Actor& a) { return a.identity.peer.address.toString() == "198.51.100.9"; });
    QVERIFY(bot != r->scenario.actors.end());
    const Arrival& a = bot->arrival;
    QCOMPARE(a.kind, Arrival::Kind::Session);
    QCOMPARE(a.total->values, std::vector<double>{4});
    QCOMPARE(a.sessionSize.values, (std::vector<double>{1, 1, 1, 2}));
    QVERIFY(a.idle);
    QCOMPARE(a.idle->values.size(), std::size_t(3));
    std::vector<double> idle = a.idle->values;
    std::sort(idle.begin(), idle.end());
    QCOMPARE(idle[0], 153'059.0);
    QCOMPARE(idle[2], 7 * 86'400.0);
    for (double v : idle)
        QVERIFY(v <= scenario_limits::kMaxSeconds);
}

QTEST_APPLESS_MAIN(TestFitBounds)
#include "tst_fit_bounds.moc"
