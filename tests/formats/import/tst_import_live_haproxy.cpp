// Live equivalence of the HAProxy import: HAProxy 2.6, started by the test on a unix socket
// with tests/data/import/live/haproxy/haproxy.cfg (a table tracking src and counting refused
// requests, one tracking a header, one read before it is counted), receives a paced trace;
// ratelab replays the log HAProxy writes under the import of that very configuration (the
// engine's haproxy_rate, HAProxy's own counter), and for every request both say the same:
// passed or denied. Then the import's HAProxy export passes `haproxy -c`.

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "fixtures/import_fixture.h"
#include "fixtures/live_proxy.h"
#include "fixtures/policy_export_fixture.h"
#include "formats/import/policy_import.h"
#include "formats/policy_export.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const char* const kHaproxy = "/usr/sbin/haproxy";

std::string installConfig(const QTemporaryDir& dir) {
    std::string text = readText(kRoot + "tests/data/import/live/haproxy/haproxy.cfg");
    for (std::size_t at; (at = text.find("@DIR@")) != std::string::npos;)
        text.replace(at, 5, dir.path().toStdString());
    writeFile(dir.filePath("haproxy.cfg"), text);
    return dir.filePath("haproxy.cfg").toStdString();
}

// The trace. HAProxy's counter works in periods that start at a key's first request (2 s for
// the client tables, 3 s for the header's); the planned times stay at least 150 ms away from
// every period's end and from every point where the weighted count crosses a whole number (the
// sender may be late on a busy machine), so that HAProxy's clock and the logged one cannot
// disagree on a decision.
std::vector<PlannedRequest> trace() {
    std::vector<PlannedRequest> t;
    auto add = [&t](int at, const char* path, const char* client, const char* key = "") {
        t.push_back(PlannedRequest{at, path, client, key});
    };
    // /web/: per client, more than 3 in the weighted 2 s is denied, denied requests counted.
    for (int i = 0; i < 5; ++i)
        add(100 * i, "/web/a", "192.0.2.1");  // 4th and 5th denied
    add(2600, "/web/a", "192.0.2.1");         // 5 * 1400/2000 + 1 = 4.5: denied
    add(3500, "/web/b", "192.0.2.1");         // 5 * 500/2000 + 2 = 3.25: passes
    add(3800, "/web/b", "192.0.2.1");         // 5 * 200/2000 + 3 = 3.5: passes
    // An idle client: after two periods without requests its periods start again at its next
    // request (T = 5450 here, not on the 2 s grid from 150), which the later decisions show.
    add(150, "/web/d", "192.0.2.7");
    for (int i = 0; i < 4; ++i)
        add(5450 + 100 * i, "/web/d", "192.0.2.7");  // C = 1..4: the 4th denied
    add(7650, "/web/d", "192.0.2.7");  // rotated at 7450: 1 + 4 * 1800/2000 = 4.6: denied
    add(8750, "/web/d", "192.0.2.7");  // 2 + 4 * 700/2000 = 3.4: passes
    add(9150, "/web/d", "192.0.2.7");  // 3 + 4 * 300/2000 = 3.6: passes
    add(9250, "/web/d", "192.0.2.7");  // 4 + 4 * 200/2000 = 4.4: denied
    for (int i = 0; i < 4; ++i)
        add(1030 + 100 * i, "/web/c", "2001:db8::5");  // 4th denied
    add(1450, "/web/c", "2001:db8::6");
    // /api/: per X-Key, from 3 in the weighted 3 s on, denied; no X-Key, not tracked.
    add(20, "/api/x", "192.0.2.10", "alpha");
    add(220, "/api/x", "192.0.2.11", "alpha");
    add(420, "/api/x", "192.0.2.10", "alpha");  // third: denied
    add(620, "/api/x", "192.0.2.11", "alpha");  // denied
    for (int i = 0; i < 5; ++i)
        add(250 + 40 * i, "/api/y", "192.0.2.10");
    add(820, "/api/x", "192.0.2.10", "beta");
    add(1020, "/api/x", "192.0.2.10", "beta");
    // /late/: read before it is counted, so denied requests do not count.
    for (int i = 0; i < 5; ++i)
        add(50 + 100 * i, "/late/z", "192.0.2.9");  // 4th, 5th denied
    add(2350, "/late/z", "192.0.2.9");              // 3 * 1700/2000 = 2.55: passes
    add(2450, "/late/z", "192.0.2.9");              // 3 * 1600/2000 + 1 = 3.4: denied
    std::sort(t.begin(), t.end(),
              [](const PlannedRequest& a, const PlannedRequest& b) { return a.atMs < b.atMs; });
    return t;
}

}  // namespace

class TestImportLiveHaproxy : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kHaproxy), kHaproxy); }

    void importedLimitsDecideAsHaproxy() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string cfg = installConfig(dir);
        const formats::ImportResult imported =
            formats::importPolicies(formats::ImportKind::Haproxy, {cfg});
        QVERIFY2(imported.policies.has_value(), formatDiagnostics(imported.diagnostics).c_str());

        LiveServer haproxy;
        QVERIFY2(haproxy.start(kHaproxy, {"-db", "-f", QString::fromStdString(cfg)}, dir.path(),
                               "haproxy.sock"),
                 haproxy.errors().c_str());
        const std::vector<PlannedRequest> requests = trace();
        const std::vector<int> statuses =
            sendPaced(dir.filePath("haproxy.sock").toStdString(), requests);
        haproxy.waitForOutputLines(static_cast<int>(requests.size()));
        const std::string log = haproxy.stop();
        for (std::size_t i = 0; i < statuses.size(); ++i)
            QVERIFY2(statuses[i] == 200 || statuses[i] == 429,
                     qPrintable(QString("request %1 got %2").arg(i).arg(statuses[i])));

        // HAProxy's log as CSV, for the replay and for HAProxy's own verdicts.
        writeFile(dir.filePath("access.csv"),
                  "ts_ms,client,path,method,status,header:x-key\n" + log);
        struct Logged {
            std::int64_t ms = 0;
            std::string client, path, key;
            int status = 0;
        };
        std::vector<Logged> logged(2);  // by file line; line 1 is the header
        for (std::size_t at = 0; at < log.size();) {
            const std::size_t end = log.find('\n', at);
            const QStringList f =
                QString::fromStdString(log.substr(at, end - at)).split(QLatin1Char(','));
            QCOMPARE(f.size(), 6);
            logged.push_back(Logged{f[0].toLongLong(), f[1].toStdString(), f[2].toStdString(),
                                    f[5].toStdString(), f[4].toInt()});
            at = end == std::string::npos ? log.size() : end + 1;
        }
        QCOMPARE(logged.size() - 2, requests.size());

        std::string error;
        const std::vector<ReplayedDecision> decisions = replayLog(
            dir.filePath("access.csv").toStdString(),
            sim::LogFormatOptions{sim::LogFormat::Csv, {}, {}}, *imported.policies, error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(decisions.size(), requests.size());

        // A request without X-Key, which HAProxy does not track, is not limited by the engine
        // either (key.when_missing "skip"). The rate counter is carried over exactly: no
        // warning about it, and no difference (192.0.2.1's request at 2.6 s is denied by both,
        // counting the requests denied before it: 5 x 1400/2000 + 1 = 4.5 > 3).
        const std::string diagnostics = formatDiagnostics(imported.diagnostics);
        QVERIFY2(diagnostics.find("rate counter") == std::string::npos, diagnostics.c_str());
        QVERIFY2(diagnostics.find("denies too") == std::string::npos, diagnostics.c_str());
        QVERIFY2(diagnostics.find("412") == std::string::npos, diagnostics.c_str());
        int denied = 0, passed = 0, keyless = 0;
        std::string disagreements;
        for (const ReplayedDecision& d : decisions) {
            const Logged& l = logged[d.line];
            const bool haproxyDenied = l.status == 429;
            (haproxyDenied ? denied : passed) += 1;
            if (l.path.starts_with("/api/") && l.key == "-" && !haproxyDenied && !d.matched)
                ++keyless;
            if (haproxyDenied != d.refused) {
                disagreements += "line " + std::to_string(d.line) + ": HAProxy " +
                                 std::to_string(l.status) + ", ratelab " +
                                 (d.refused ? "refused" : "passed") + "\n";
            }
        }
        QVERIFY2(disagreements.empty(), (disagreements + log).c_str());
        QCOMPARE(keyless, 5);
        QCOMPARE(denied, 12);
        QCOMPARE(passed, 28);
        qInfo(
            "%zu requests, HAProxy and ratelab agree on each: %d passed (%d without X-Key, "
            "limited by neither), %d denied",
            decisions.size(), passed, keyless, denied);
    }

    // The import exported back to HAProxy is a configuration HAProxy accepts.
    void exportOfTheImportPassesHaproxyC() {
        QTemporaryDir dir;
        const formats::ImportResult imported =
            formats::importPolicies(formats::ImportKind::Haproxy, {installConfig(dir)});
        QVERIFY(imported.policies.has_value());
        const formats::ExportResult exported =
            formats::exportPolicySet(*imported.policies, formats::ExportTarget::Haproxy);
        QVERIFY2(exported.ok(),
                 exported.notes.empty() ? "" : exported.notes.front().message.c_str());
        const std::size_t rules = exported.text.find("# 2. ");
        std::string config =
            "global\n    log stderr local0\ndefaults\n    mode http\n    timeout connect 1s\n"
            "    timeout client 1s\n    timeout server 1s\n\n" +
            exported.text.substr(0, rules) + "frontend check\n    bind unix@" +
            dir.filePath("s").toStdString() + "\n" +
            (rules == std::string::npos ? "" : exported.text.substr(rules));
        writeFile(dir.filePath("export.cfg"), config);
        QProcess haproxy;
        haproxy.setProcessChannelMode(QProcess::MergedChannels);
        haproxy.start(kHaproxy, {"-c", "-f", dir.filePath("export.cfg")});
        QVERIFY(haproxy.waitForFinished(60'000));
        const QString output = QString::fromUtf8(haproxy.readAll());
        QVERIFY2(haproxy.exitCode() == 0, qPrintable(output + QString::fromStdString(config)));
    }
};

QTEST_GUILESS_MAIN(TestImportLiveHaproxy)
#include "tst_import_live_haproxy.moc"
