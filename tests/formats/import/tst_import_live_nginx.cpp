// Live equivalence of the nginx import: nginx 1.22, started by the test on a unix socket with
// tests/data/import/live/nginx/ (several zones, r/s and r/m rates, burst with nodelay, without
// it and with delay=, a dry run, an include, limits inherited across locations, a header key),
// receives a paced trace; ratelab replays nginx's own access log under the import of that very
// configuration, and for every request both say the same: passed, delayed, rejected (or their
// dry-run forms), or not limited at all. Then the import's nginx export passes `nginx -t`.

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "fixtures/import_fixture.h"
#include "fixtures/live_proxy.h"
#include "fixtures/nginx_fixture.h"
#include "formats/import/policy_import.h"
#include "formats/policy_export.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

// The configuration's files, with @DIR@ written as `dir`.
void installConfig(const QTemporaryDir& dir) {
    const QString source = kRoot + "tests/data/import/live/nginx/";
    QDir(dir.path()).mkpath("zones");
    for (const char* file :
         {"home", "docs/a", "docs/b", "docs/c", "api/x", "api/v2/y", "search/q", "beta/x"}) {
        const QString path = dir.filePath(QString("html/") + file);
        QDir().mkpath(QFileInfo(path).path());
        writeFile(path, "ok\n");
    }
    for (const char* file : {"nginx.conf", "zones/limits.conf"}) {
        std::string text = readText(source + file);
        for (std::size_t at; (at = text.find("@DIR@")) != std::string::npos;)
            text.replace(at, 5, dir.path().toStdString());
        writeFile(dir.filePath(file), text);
    }
}

// The trace: each client stays within one policy's routes (nginx shares a zone's state between
// locations, ratelab's policies each keep their own: the import warns, and this trace does not
// depend on it). Requests of one key are at least 30 ms apart, and every decision stays the
// same if a request arrives a few hundred milliseconds off its plan (the sender may be late on
// a busy machine), so that nginx's clock (monotonic, milliseconds) and the logged one (wall
// clock) cannot disagree on a decision. nginx's numbers: perip 2 r/s (2000 thousandths a
// second), perip_slow 20 r/m (333, nginx's truncation), perkey 1 r/s.
std::vector<PlannedRequest> trace() {
    std::vector<PlannedRequest> t;
    auto add = [&t](int at, const char* path, const char* client, const char* key = "") {
        t.push_back(PlannedRequest{at, path, client, key});
    };
    // /docs/: burst=3 nodelay. Within 500 ms of a fresh key's first request the fifth is
    // rejected; 2.9 s later the key is fresh again. No location limits /home.
    for (int i = 0; i < 5; ++i)
        add(30 * i, i % 2 ? "/docs/a" : "/docs/b", "192.0.2.1");
    for (int i = 0; i < 5; ++i)
        add(3000 + 30 * i, i % 2 ? "/home" : "/docs/b", "192.0.2.1");
    // IPv6 clients, each address its own key.
    for (int i = 0; i < 5; ++i)
        add(200 + 30 * i, "/docs/c", "2001:db8::1");
    add(350, "/docs/c", "2001:db8::2");
    add(380, "/docs/c", "2001:db8::2");
    // /api/ and the nested /api/v2/ (inherited): perip burst=2 (delayed) and perip_slow burst=1
    // nodelay on one key. A request perip_slow rejects does not charge perip.
    add(5, "/api/x", "192.0.2.2");
    add(45, "/api/x", "192.0.2.2");     // delayed 460 ms by perip
    add(85, "/api/v2/y", "192.0.2.2");  // rejected by perip_slow
    add(1505, "/api/x", "192.0.2.2");   // still rejected (1501 > 1000)
    add(4005, "/api/v2/y", "192.0.2.2");
    add(4045, "/api/x", "192.0.2.2");  // rejected
    add(6705, "/api/v2/y", "192.0.2.2");
    add(6735, "/api/v2/y", "192.0.2.3");  // another client, another key
    // /search/: keyed by X-Key, burst=2 delay=1; no X-Key, no limit.
    add(10, "/search/q", "192.0.2.5", "alpha");
    add(110, "/search/q", "192.0.2.5", "alpha");
    add(210, "/search/q", "192.0.2.5", "alpha");  // delayed 800 ms
    add(310, "/search/q", "192.0.2.6", "alpha");  // rejected: the key, whatever the client
    add(2810, "/search/q", "192.0.2.6", "alpha");
    for (int i = 0; i < 4; ++i)
        add(410 + 30 * i, "/search/q", "192.0.2.5");
    add(610, "/search/q", "192.0.2.5", "beta");
    add(810, "/search/q", "192.0.2.5", "beta");
    add(1010, "/search/q", "192.0.2.5", "beta");  // delayed 600 ms
    // /beta/: a dry run, burst=1 nodelay: rejections are logged, not made, and change nothing.
    for (int i = 0; i < 4; ++i)
        add(15 + 30 * i, "/beta/x", "192.0.2.7");
    add(2615, "/beta/x", "192.0.2.7");
    std::sort(t.begin(), t.end(),
              [](const PlannedRequest& a, const PlannedRequest& b) { return a.atMs < b.atMs; });
    return t;
}

// What nginx's $limit_req_status says ratelab decided ("NO_KEY": a 412, which nginx has not).
std::string ratelabStatus(const ReplayedDecision& d) {
    if (!d.matched) return "-";
    if (d.noKey) return "NO_KEY";
    if (d.refused) return "REJECTED";
    if (d.shadowRefused) return "REJECTED_DRY_RUN";
    if (d.delay > 0) return d.shadow ? "DELAYED_DRY_RUN" : "DELAYED";
    return "PASSED";
}

}  // namespace

class TestImportLiveNginx : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kNginx), kNginx); }

    void importedLimitsDecideAsNginx() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        installConfig(dir);
        const std::string conf = dir.filePath("nginx.conf").toStdString();
        const formats::ImportResult imported =
            formats::importPolicies(formats::ImportKind::Nginx, {conf});
        QVERIFY2(imported.policies.has_value(), formatDiagnostics(imported.diagnostics).c_str());

        LiveServer nginx;
        QVERIFY2(nginx.start(kNginx,
                             {"-p", dir.path(), "-c", dir.filePath("nginx.conf"), "-e",
                              dir.filePath("error.log")},
                             dir.path(), "nginx.pid"),
                 readText(dir.filePath("error.log")).c_str());
        const std::vector<PlannedRequest> requests = trace();
        const std::vector<int> statuses =
            sendPaced(dir.filePath("nginx.sock").toStdString(), requests);
        nginx.stop();
        for (std::size_t i = 0; i < statuses.size(); ++i)
            QVERIFY2(statuses[i] == 200 || statuses[i] == 429,
                     qPrintable(QString("request %1 (%2 at %3 ms) got %4")
                                    .arg(i)
                                    .arg(QString::fromStdString(requests[i].path))
                                    .arg(requests[i].atMs)
                                    .arg(statuses[i])));

        // nginx's verdicts, by log line.
        const std::string log = readText(dir.filePath("access.log"));
        std::vector<std::string> verdicts{""};
        std::vector<std::string> lines{""};
        for (std::size_t at = 0; at < log.size();) {
            const std::size_t end = log.find('\n', at);
            const std::string line = log.substr(at, end - at);
            verdicts.push_back(line.substr(line.rfind(' ') + 1));
            lines.push_back(line);
            at = end == std::string::npos ? log.size() : end + 1;
        }
        QCOMPARE(verdicts.size() - 1, requests.size());

        std::string error;
        const std::vector<ReplayedDecision> decisions =
            replayLog(dir.filePath("access.log").toStdString(),
                      sim::LogFormatOptions{sim::LogFormat::Nginx,
                                            "$msec $remote_addr $request_method $uri $status "
                                            "\"$http_x_key\" $limit_req_status",
                                            {}},
                      *imported.policies, error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(decisions.size(), requests.size());
        // A request whose key is empty (no X-Key on /search/): nginx does not limit it, nor
        // does the engine (key.when_missing "skip"); nothing about it is warned.
        QVERIFY2(formatDiagnostics(imported.diagnostics).find("412") == std::string::npos,
                 formatDiagnostics(imported.diagnostics).c_str());
        std::map<std::string, int> seen;
        int keyless = 0;
        std::string disagreements;
        for (const ReplayedDecision& d : decisions) {
            const std::string& nginxSays = verdicts[d.line];
            ++seen[nginxSays];
            const std::string& line = lines[d.line];
            if (line.find("/search/q") != std::string::npos &&
                line.find(" \"-\" ") != std::string::npos && nginxSays == "-" &&
                ratelabStatus(d) == "-")
                ++keyless;
            if (ratelabStatus(d) != nginxSays) {
                disagreements += "line " + std::to_string(d.line) + ": nginx " + nginxSays +
                                 ", ratelab " + ratelabStatus(d) + "\n";
            }
        }
        QVERIFY2(disagreements.empty(), (disagreements + log).c_str());
        QCOMPARE(keyless, 4);
        QCOMPARE(seen["PASSED"], 25);
        QCOMPARE(seen["DELAYED"], 3);
        QCOMPARE(seen["REJECTED"], 6);
        QCOMPARE(seen["REJECTED_DRY_RUN"], 2);
        QCOMPARE(seen["-"], 6);
        // The trace reaches every outcome.
        for (const char* outcome : {"PASSED", "DELAYED", "REJECTED", "REJECTED_DRY_RUN", "-"})
            QVERIFY2(seen[outcome] > 0, outcome);
        qInfo(
            "%zu requests, nginx and ratelab agree on each: %d passed, %d delayed, %d "
            "rejected, %d rejected in the dry run, %d not limited (%d of them without the "
            "key's header)",
            decisions.size(), seen["PASSED"], seen["DELAYED"], seen["REJECTED"],
            seen["REJECTED_DRY_RUN"], seen["-"], keyless);
    }

    // The import exported back to nginx is a configuration nginx accepts: the enforcing
    // policies in one file, the dry run's in another (nginx's limit_req_dry_run is per block,
    // the exporter writes one block).
    void exportOfTheImportPassesNginxT() {
        QTemporaryDir dir;
        installConfig(dir);
        const formats::ImportResult imported = formats::importPolicies(
            formats::ImportKind::Nginx, {dir.filePath("nginx.conf").toStdString()});
        QVERIFY(imported.policies.has_value());
        for (const PolicyMode mode : {PolicyMode::Enforce, PolicyMode::Shadow}) {
            PolicySet part = *imported.policies;
            std::erase_if(part.policies, [mode](const Policy& p) { return p.mode != mode; });
            QVERIFY(!part.policies.empty());
            const formats::ExportResult exported =
                formats::exportPolicySet(part, formats::ExportTarget::Nginx);
            QVERIFY2(exported.ok(),
                     exported.notes.empty() ? "" : exported.notes.front().message.c_str());
            const NginxCheck check = nginxTest(exported.text);
            QVERIFY2(check.exitCode == 0, qPrintable(check.output));
        }
    }
};

QTEST_GUILESS_MAIN(TestImportLiveNginx)
#include "tst_import_live_nginx.moc"
