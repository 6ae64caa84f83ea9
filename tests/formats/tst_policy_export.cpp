// Exports: golden files for nginx, Envoy and HAProxy (Envoy is not in Debian, so its exports are
// checked against goldens and parsed as YAML), refusals, and nginx's rate text. nginx and
// HAProxy themselves check their exports in tst_policy_export_nginx and
// tst_policy_export_haproxy; the CLI's export is in tests/cli/tst_cli.cpp.

#include <QRegularExpression>
#include <QtTest>

#include "fixtures/policy_export_fixture.h"
#include "formats/export/export_targets.h"
#include "formats/policy_export.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::testing;

class TestPolicyExport : public QObject {
    Q_OBJECT

private slots:
    void matchesGoldenFiles_data() {
        QTest::addColumn<QString>("policy");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("golden");
        auto row = [](const QString& policy, const char* target) {
            QString name = QFileInfo(policy).completeBaseName();
            QTest::newRow(qPrintable(name + "." + target))
                << kRoot + policy << QString(target)
                << kRoot + "tests/data/policies/exports/" + name + "." + target + ".golden";
        };
        for (const char* t : {"nginx", "envoy", "haproxy"}) {
            row("resources/policies/default.json", t);
            row("resources/policies/nginx-compatible.json", t);
            row("tests/data/policies/valid/with-validation.json", t);
        }
        row("tests/data/policies/valid/nginx-features.json", "nginx");
        row("tests/data/policies/valid/envoy-features.json", "envoy");
        row("tests/data/policies/valid/haproxy-features.json", "haproxy");
        row("tests/data/policies/valid/haproxy-rate.json", "haproxy");
    }
    void matchesGoldenFiles() {
        QFETCH(QString, policy);
        QFETCH(QString, target);
        QFETCH(QString, golden);
        formats::ExportResult result = formats::exportPolicySet(
            load(policy), *formats::parseExportTarget(target.toStdString()));
        QVERIFY(result.ok());
        QCOMPARE(QString::fromStdString(result.text), QString::fromStdString(readText(golden)));
        // Deterministic: the same set gives the same bytes.
        QCOMPARE(formats::exportPolicySet(load(policy),
                                          *formats::parseExportTarget(target.toStdString()))
                     .text,
                 result.text);
    }
    // haproxy_rate is HAProxy's own counter: exported without a note on the algorithm, with the
    // table's expire, and read first (the deny before the track-sc) when refused requests do
    // not count; nginx and Envoy refuse it.
    void haproxyRateIsExported() {
        const PolicySet set = load(kRoot + "tests/data/policies/valid/haproxy-rate.json");
        const formats::ExportResult haproxy =
            formats::exportPolicySet(set, formats::ExportTarget::Haproxy);
        QVERIFY(haproxy.ok());
        for (const formats::ExportNote& n : haproxy.notes)
            QVERIFY2(n.pointer.find("/algorithm") == std::string::npos, n.message.c_str());
        const std::string& text = haproxy.text;
        QVERIFY(text.find("expire 60s store http_req_rate(10s)") != std::string::npos);
        QVERIFY(text.find("size 1000000 store http_req_rate(10s)") != std::string::npos);
        const std::size_t denyFirst = text.find(
            "http-request deny deny_status 429 if ratelab_deny_then_track_route { "
            "req.fhdr(X-Api-Key,1),sha1,table_http_req_rate(ratelab_deny_then_track) gt 5 }");
        const std::size_t trackAfter = text.find("http-request track-sc1 req.fhdr(X-Api-Key,1)");
        QVERIFY2(denyFirst != std::string::npos && trackAfter > denyFirst, text.c_str());
        QVERIFY(text.find("{ sc_http_req_rate(0) gt 5 }") != std::string::npos);
        for (formats::ExportTarget t :
             {formats::ExportTarget::Nginx, formats::ExportTarget::Envoy}) {
            const formats::ExportResult refused = formats::exportPolicySet(set, t);
            QVERIFY(!refused.ok());
            QVERIFY(std::any_of(refused.notes.begin(), refused.notes.end(),
                                [](const formats::ExportNote& n) {
                                    return n.kind == formats::ExportNote::Kind::Refused &&
                                           n.pointer == "/policies/0/algorithm" &&
                                           n.message.find("haproxy_rate") != std::string::npos;
                                }));
        }
    }

    // The nginx-compatible policy is reproduced exactly: no approximation at all.
    void nginxCompatibleIsExact() {
        formats::ExportResult nginx = formats::exportPolicySet(
            load(kRoot + "resources/policies/nginx-compatible.json"), formats::ExportTarget::Nginx);
        QVERIFY(nginx.ok());
        QVERIFY(nginx.notes.empty());
        QVERIFY(
            nginx.text.find("limit_req_zone $ratelab_web_addr zone=ratelab_web:20m rate=10r/s;\n"
                            "limit_req zone=ratelab_web burst=20 nodelay;\n") != std::string::npos);
        QVERIFY(nginx.text.find("limit_req_status 429;") != std::string::npos);
    }
    void shippedExportableToNginx() {
        for (const char* f : {"default", "nginx-compatible"}) {
            QVERIFY(formats::exportPolicySet(load(kRoot + "resources/policies/" + f + ".json"),
                                             formats::ExportTarget::Nginx)
                        .ok());
        }
    }
    void envoyExportsAreYaml() {
        QStringList files;
        for (const QString& f :
             QDir(kRoot + "tests/data/policies/exports").entryList({"*.envoy.golden"})) {
            files << kRoot + "tests/data/policies/exports/" + f;
        }
        QVERIFY(files.size() >= 4);
        const char* script =
            "import sys, yaml\n"
            "for path in sys.argv[1:]:\n"
            "    doc = yaml.safe_load(open(path))\n"
            "    filters = doc['http_filters']\n"
            "    assert filters, path\n"
            "    for f in filters:\n"
            "        c = f['typed_config']\n"
            "        assert c['@type'].endswith('local_ratelimit.v3.LocalRateLimit'), path\n"
            "        assert c['filter_enabled']['default_value']['numerator'] == 100\n"
            "        for d in c['descriptors']:\n"
            "            tb = d['token_bucket']\n"
            "            assert tb['max_tokens'] >= 1 and tb['tokens_per_fill'] >= 1\n"
            "            s = float(tb['fill_interval'].rstrip('s'))\n"
            "            assert s >= 0.05, path\n"
            "        assert len(c['rate_limits']) == len(c['descriptors'])\n"
            "print('ok', len(sys.argv) - 1)\n";
        QProcess python;
        python.start("/usr/bin/python3", QStringList{"-c", script} + files);
        QVERIFY(python.waitForFinished(60'000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QCOMPARE(QString::fromUtf8(python.readAllStandardOutput()).trimmed(),
                 QString("ok %1").arg(files.size()));
    }
    void refusals_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("targets");  // the targets that refuse
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("message");
        auto one = [](const std::string& members, const std::string& top = "") {
            return QString::fromStdString("{\"version\": 1, " + top +
                                          "\"policies\": [{\"name\": \"p\", " + members + "}]}");
        };
        QTest::newRow("principal key")
            << one("\"key\": {\"source\": \"principal\"}") << "nginx envoy haproxy"
            << "/policies/0/key/source"
            << "keys on the verified principal";
        QTest::newRow("tiers")
            << one("\"key\": {\"source\": \"principal\"}, \"tiers\": {\"attribute\": \"plan\", "
                   "\"default\": \"a\", \"limits\": {\"a\": {\"capacity\": 5}}}")
            << "nginx envoy haproxy"
            << "/policies/0/tiers"
            << "verified attribute (tiers)";
        QTest::newRow("sliding log") << one("\"algorithm\": \"sliding_log\"") << "nginx envoy"
                                     << "/policies/0/algorithm"
                                     << "up to twice the quota";
        QTest::newRow("sliding window")
            << one("\"algorithm\": \"sliding_window\", \"key\": {\"source\": \"peer\"}")
            << "nginx envoy"
            << "/policies/0/algorithm"
            << "up to twice the quota";
        QTest::newRow("bypass ranges")
            << one("\"bypass\": {\"cidrs\": [\"10.0.0.0/8\"]}") << "envoy"
            << "/policies/0/bypass/cidrs"
            << "exempts address ranges";
        QTest::newRow("bypass principals")
            << one("\"bypass\": {\"principals\": [\"ops\"]}") << "nginx envoy haproxy"
            << "/policies/0/bypass/principals"
            << "exempts verified principals";
        QTest::newRow("attribute part") << one("\"key\": {\"source\": \"composite\", \"parts\": "
                                               "[\"route\", \"attribute:account\"]}")
                                        << "nginx envoy haproxy"
                                        << "/policies/0/key/parts/1"
                                        << "\"attribute:account\"";
        QTest::newRow("method part in haproxy")
            << one("\"key\": {\"source\": \"composite\", \"parts\": [\"route\", \"method\"]}, "
                   "\"budget\": {\"enabled\": false}")
            << "haproxy"
            << "/policies/0/key/parts/1"
            << "cannot build into a key";
        QTest::newRow("budgeted header key")
            << one("\"key\": {\"source\": \"header\", \"header\": \"x-api-key\"}")
            << "nginx envoy haproxy"
            << "/policies/0/budget/enabled"
            << "fresh bucket per request";
        QTest::newRow("ipv6 /56 in nginx") << one("\"key\": {\"ipv6_prefix\": 56}") << "nginx"
                                           << "/policies/0/key/ipv6_prefix"
                                           << "whole 16-bit fields";
        QTest::newRow("ipv4 /20 in nginx") << one("\"key\": {\"ipv4_prefix\": 20}") << "nginx"
                                           << "/policies/0/key/ipv4_prefix"
                                           << "whole octets";
        QTest::newRow("header name nginx cannot name")
            << one("\"key\": {\"source\": \"header\", \"header\": \"x.key\"}, \"budget\": "
                   "{\"enabled\": false}")
            << "nginx"
            << "/policies/0/key/header"
            << "$http_ variable";
        QTest::newRow("forwarded header")
            << one("\"capacity\": 5",
                   "\"trusted_proxies\": {\"cidrs\": [\"10.0.0.0/8\"], "
                   "\"header\": \"forwarded\"}, ")
            << "nginx envoy haproxy"
            << "/trusted_proxies/header"
            << "Forwarded";
        QTest::newRow("x-real-ip in envoy")
            << one("\"capacity\": 5",
                   "\"trusted_proxies\": {\"cidrs\": [\"10.0.0.0/8\"], "
                   "\"header\": \"x-real-ip\"}, ")
            << "envoy"
            << "/trusted_proxies/header"
            << "X-Forwarded-For only";
        QTest::newRow("below 1r/m") << one("\"capacity\": 10, \"refill_per_second\": 0.001, "
                                           "\"key\": {\"source\": \"peer\"}")
                                    << "nginx"
                                    << "/policies/0/refill_per_second"
                                    << "below nginx's slowest rate (1r/m)";
        QTest::newRow("window under 50 ms")
            << one("\"algorithm\": \"fixed_window\", \"capacity\": 5, \"window_ms\": 20") << "envoy"
            << "/policies/0/window_ms"
            << "at most every 50 ms";
        QTest::newRow("mixed shadow") << QString(
                                             "{\"version\": 1, \"policies\": [{\"name\": \"a\"}, "
                                             "{\"name\": \"b\", \"mode\": \"shadow\"}]}")
                                      << "nginx"
                                      << "/policies/1/mode"
                                      << "limit_req_dry_run applies to every limit_req";
        QTest::newRow("four policies")
            << QString(
                   "{\"version\": 1, \"policies\": [{\"name\": \"a\"}, {\"name\": \"b\"}, "
                   "{\"name\": \"c\"}, {\"name\": \"d\"}]}")
            << "haproxy"
            << "/policies/3"
            << "3 stick counters";
    }
    void refusals() {
        QFETCH(QString, file);
        QFETCH(QString, targets);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicySet set = parse(file.toStdString());
        for (formats::ExportTarget target :
             {formats::ExportTarget::Nginx, formats::ExportTarget::Envoy,
              formats::ExportTarget::Haproxy}) {
            const QString name =
                QString::fromStdString(std::string(formats::exportTargetName(target)));
            formats::ExportResult result = formats::exportPolicySet(set, target);
            bool refused = false;
            for (const formats::ExportNote& note : result.notes) {
                if (note.kind != formats::ExportNote::Kind::Refused) continue;
                if (QString::fromStdString(note.pointer) != pointer) continue;
                QVERIFY2(QString::fromStdString(note.message).contains(message),
                         note.message.c_str());
                QVERIFY(note.message.rfind(name.toStdString() + ": ", 0) == 0);
                refused = true;
            }
            QCOMPARE(refused, targets.split(' ').contains(name));
            if (refused) {
                QVERIFY(!result.ok());
                QVERIFY(result.text.empty());
            }
        }
    }
    // What `ratelab-cli export` prints and the workbench shows: a refusal is an error, an
    // approximation a warning, each with the note's pointer and message, at the given position.
    void notesAsDiagnostics() {
        const formats::ExportNote refused{formats::ExportNote::Kind::Refused,
                                          "/policies/0/algorithm", "nginx: policy \"p\" refused"};
        const Diagnostic error = formats::exportNoteDiagnostic(refused, "p.json", 7, 18);
        QCOMPARE(formatDiagnostic(error),
                 std::string("p.json:7:18: error: nginx: policy \"p\" refused (at "
                             "/policies/0/algorithm)"));
        const formats::ExportNote approximated{formats::ExportNote::Kind::Approximated,
                                               "/policies/0/capacity", "nginx: burst"};
        const Diagnostic warning = formats::exportNoteDiagnostic(approximated, "p.json");
        QCOMPARE(warning.severity, Diagnostic::Severity::Warning);
        QCOMPARE(formatDiagnostic(warning),
                 std::string("p.json: warning: nginx: burst (at /policies/0/capacity)"));
    }
    void nginxRates_data() {
        QTest::addColumn<qlonglong>("milli");
        QTest::addColumn<QString>("rate");
        QTest::addColumn<qlonglong>("applied");
        QTest::newRow("10/s exact") << 10000ll << "10r/s" << 10000ll;
        QTest::newRow("0.5/s exact") << 500ll << "30r/m" << 500ll;
        QTest::newRow("1/min exact") << 16ll << "1r/m" << 16ll;
        QTest::newRow("20/min exact") << 333ll << "20r/m" << 333ll;
        QTest::newRow("2.5/s exact") << 2500ll << "150r/m" << 2500ll;
        QTest::newRow("7/s in whole ns") << 6999ll << "7r/s" << 7000ll;  // 0.014% faster
        QTest::newRow("never over 1% faster") << 11ll << "" << 0ll;
        QTest::newRow("below any rate") << 0ll << "" << 0ll;
        QTest::newRow("1.7/s nearest") << 1700ll << "102r/m" << 1700ll;
    }
    void nginxRates() {
        QFETCH(qlonglong, milli);
        QFETCH(QString, rate);
        QFETCH(qlonglong, applied);
        long long got = 0;
        QCOMPARE(QString::fromStdString(formats::nginxRate(milli, got)), rate);
        if (!rate.isEmpty()) QCOMPARE(got, applied);
    }
};

QTEST_GUILESS_MAIN(TestPolicyExport)
#include "tst_policy_export.moc"
