// Envoy's rate limit service configuration (app/formats/envoy): the cases envoyproxy/ratelimit's
// loader refuses, each as the FILE:LINE:COLUMN diagnostics ratelab gives (every problem, not the
// first), the files it loads and what they mean, the ratelab extensions, and directories.

#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "formats/envoy/rls_config.h"

using namespace ratelab;
using namespace ratelab::formats::envoy;

namespace {

using Sources = std::vector<RlsSource>;

// The basic configuration of the original's tests, as its README describes it.
const char* kBasic = R"(domain: test-domain
descriptors:
  - key: key1
    value: value1
    descriptors:
      - key: subkey1
        rate_limit:
          unit: second
          requests_per_unit: 5
      - key: subkey1
        value: subvalue1
        rate_limit:
          unit: second
          requests_per_unit: 10
  - key: key2
    rate_limit:
      unit: minute
      requests_per_unit: 20
  - key: key2
    value: value2
    rate_limit:
      unit: minute
      requests_per_unit: 30
  - key: key2
    value: value3
  - key: key3
    rate_limit:
      unit: hour
      requests_per_unit: 1
  - key: key4
    rate_limit:
      unit: day
      requests_per_unit: 1
      name: key4_rate_limit
  - key: key6
    rate_limit:
      unlimited: true
  - key: key7
    rate_limit:
      unit: minute
      requests_per_unit: 70
    detailed_metric: true
)";

// Every diagnostic as text, without the pointer.
QStringList texts(const RlsLoadResult& r) {
    QStringList out;
    for (const Diagnostic& d : r.diagnostics) {
        Diagnostic copy = d;
        copy.pointer.clear();
        out << QString::fromStdString(formatDiagnostic(copy));
    }
    return out;
}

}  // namespace

class TestRlsConfig : public QObject {
    Q_OBJECT

private slots:
    // The original loader's refusals (its test files, and the cases its code refuses), with the
    // original's message and where it was written.
    void refusals_data() {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("files");
        QTest::addColumn<bool>("merge");
        QTest::addColumn<QStringList>("expected");
        auto row = [](const char* tag, QStringList names, QStringList files, bool merge,
                      QStringList expected) {
            QTest::newRow(tag) << names << files << merge << expected;
        };
        row("1 empty domain", {"empty_domain.yaml"}, {"descriptors:\n"}, false,
            {"empty_domain.yaml:1:1: error: config file cannot have empty domain"});
        row("2 duplicate domain", {"basic_config.yaml", "duplicate_domain.yaml"},
            {kBasic, "domain: test-domain\n"}, false,
            {"duplicate_domain.yaml:1:9: error: duplicate domain 'test-domain' in config file "
             "(first in basic_config.yaml at line 1; several files share a domain only when "
             "domains are merged)"});
        row("3 empty key", {"empty_key.yaml"},
            {"domain: test-domain\ndescriptors:\n  - value: value1\n"}, false,
            {"empty_key.yaml:3:5: error: descriptor has empty key"});
        row("4 duplicate key", {"duplicate_key.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    value: value1\n"
             "  - key: key1\n    value: value1\n"},
            false,
            {"duplicate_key.yaml:5:10: error: duplicate descriptor composite key "
             "'test-domain.key1_value1' (first at line 3)"});
        const QString merge1 =
            "domain: test-domain\ndescriptors:\n  - key: key1\n    value: value1\n"
            "    rate_limit: {unit: minute, requests_per_unit: 10}\n";
        row("5 merged twice", {"merge_domain_key1.yaml", "merge_domain_key1.yaml"},
            {merge1, merge1}, true,
            {"merge_domain_key1.yaml:3:10: error: duplicate descriptor composite key "
             "'test-domain.key1_value1' (also in merge_domain_key1.yaml at line 3)"});
        row("6 bad unit", {"bad_limit_unit.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    rate_limit:\n"
             "      unit: foo\n      requests_per_unit: 5\n"},
            false,
            {"bad_limit_unit.yaml:5:13: error: invalid rate limit unit 'foo' (second, minute, "
             "hour, day, week, month or year)"});
        row("7 replaces itself", {"replaces_self.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    rate_limit:\n"
             "      unit: minute\n      requests_per_unit: 5\n      name: self\n"
             "      replaces:\n        - name: self\n"},
            false,
            {"replaces_self.yaml:9:17: error: replaces should not contain name of same "
             "descriptor"});
        row("8 empty replaces", {"replaces_empty.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    rate_limit:\n"
             "      unit: minute\n      requests_per_unit: 5\n      replaces:\n        - name:\n"},
            false, {"replaces_empty.yaml:8:11: error: should not have an empty replaces entry"});
        row("9 bad yaml", {"bad_yaml.yaml"}, {"'''"}, false,
            {"bad_yaml.yaml:1:4: error: error loading config file: illegal EOF in scalar"});
        row("10 misspelled key", {"misspelled_key.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    ratelimit:\n"
             "      unit: minute\n      requests_per_unit: 5\n"},
            false,
            {"misspelled_key.yaml:4:5: error: config error, unknown key 'ratelimit'; did you mean "
             "'rate_limit'?"});
        row("11 misspelled key 2", {"misspelled_key2.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    rate_limit:\n"
             "      unit: minute\n      requestsperunit: 5\n"},
            false,
            {"misspelled_key2.yaml:6:7: error: config error, unknown key 'requestsperunit'; did "
             "you mean 'requests_per_unit'?"});
        row("12 non-string key", {"non_string_key.yaml"},
            {"domain: test-domain\n0.25: 1\ndescriptors:\n"}, false,
            {"non_string_key.yaml:2:1: error: config error, key is not of type string: 0.25"});
        row("13 list of non-maps", {"non_map_list.yaml"},
            {"domain: test-domain\ndescriptors: [a, b, c]\n"}, false,
            {"non_map_list.yaml:2:15: error: config error, yaml file contains list of type other "
             "than map: a",
             "non_map_list.yaml:2:18: error: config error, yaml file contains list of type other "
             "than map: b",
             "non_map_list.yaml:2:21: error: config error, yaml file contains list of type other "
             "than map: c"});
        row("14 unlimited with a unit", {"unlimited_with_unit.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    rate_limit:\n"
             "      unlimited: true\n      unit: day\n"},
            false,
            {"unlimited_with_unit.yaml:6:13: error: should not specify rate limit unit when "
             "unlimited"});
        row("15 no unit", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {requests_per_unit: 5}\n"},
            false,
            {"f.yaml:4:17: error: invalid rate limit unit '' (second, minute, hour, day, week, "
             "month or year)"});
        row("16 share_threshold without a wildcard", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    value: b\n    share_threshold: true\n"},
            false,
            {"f.yaml:5:22: error: share_threshold can only be used with wildcard values "
             "(containing '*'), but found key 'a_b'"});
        row("17 float", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
             "      requests_per_unit: 1.5\n"},
            false,
            {"f.yaml:6:26: error: error checking config: 1.5 is a floating-point number, which "
             "envoyproxy/ratelimit refuses everywhere (quote it if it is text)"});
        row("18 descriptors not a list", {"f.yaml"}, {"domain: d\ndescriptors: foo\n"}, false,
            {"f.yaml:2:14: error: error loading config file: descriptors must be a list of maps, "
             "found 'foo'"});
        row("19 empty file", {"f.yaml"}, {""}, false,
            {"f.yaml:1:1: error: config file cannot have empty domain"});
        row("20 nested duplicate", {"f.yaml"},
            {"domain: test-domain\ndescriptors:\n  - key: key1\n    value: value1\n"
             "    descriptors:\n      - key: subkey1\n      - key: subkey1\n"},
            false,
            {"f.yaml:7:14: error: duplicate descriptor composite key "
             "'test-domain.key1_value1.subkey1' (first at line 6)"});
        row("every problem at once", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight}\n"
             "  - value: b\n  - key: c\n    rate_limit: {unit: day, unlimited: yes}\n"
             "  - key: a\n"},
            false,
            {"f.yaml:4:24: error: invalid rate limit unit 'fortnight' (second, minute, hour, day, "
             "week, month or year)",
             "f.yaml:5:5: error: descriptor has empty key",
             "f.yaml:7:24: error: should not specify rate limit unit when unlimited",
             "f.yaml:8:10: error: duplicate descriptor composite key 'd.a' (first at line 3)"});
        row("a map where a list belongs", {"f.yaml"}, {"domain: d\ndescriptors:\n  key: a\n"},
            false,
            {"f.yaml:3:3: error: error loading config file: descriptors must be a list of maps, "
             "found a map"});
        row("a list where a map belongs", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      - unit: second\n"}, false,
            {"f.yaml:5:7: error: error loading config file: rate_limit must be a map, found a "
             "list"});
        row("a number that is no uint32", {"f.yaml"},
            {"domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, "
             "requests_per_unit: 4294967296}\n"},
            false,
            {"f.yaml:4:51: error: error loading config file: requests_per_unit must be a whole "
             "number from 0 to 4294967295, found '4294967296'"});
        row("a document that is a list", {"f.yaml"}, {"- domain: d\n"}, false,
            {"f.yaml:1:1: error: error loading config file: the document must be a map with "
             "domain and descriptors, found a list"});
    }
    void refusals() {
        QFETCH(QStringList, names);
        QFETCH(QStringList, files);
        QFETCH(bool, merge);
        QFETCH(QStringList, expected);
        Sources sources;
        for (int i = 0; i < names.size(); ++i)
            sources.push_back({names[i].toStdString(), files[i].toStdString()});
        RlsLoadOptions options;
        options.mergeDomains = merge;
        const RlsLoadResult r = parseRlsConfig(sources, options);
        QVERIFY(!r.ok());
        QCOMPARE(texts(r), expected);
    }

    // What the original accepts but ignores is a warning: the file still loads.
    void warnings_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("a key of another level")
            << "domain: d\ndescriptors:\n  - key: a\n    unit: second\n"
            << QStringList{
                   "f.yaml:4:5: warning: 'unit' has no meaning here, and is ignored (as "
                   "envoyproxy/ratelimit does)"};
        QTest::newRow("a duplicate YAML key")
            << "domain: d\ndomain: e\n"
            << QStringList{
                   "f.yaml:1:1: warning: duplicate key 'domain': the later one, at line "
                   "2, is used (as envoyproxy/ratelimit does)"};
        QTest::newRow("a second document")
            << "domain: d\n---\ndomain: e\n"
            << QStringList{
                   "f.yaml:2:1: warning: only the first YAML document of a file is read "
                   "(as envoyproxy/ratelimit does); this one and any after it are "
                   "ignored"};
    }
    void warnings() {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        const RlsLoadResult r = parseRlsConfig({{"f.yaml", text.toStdString()}});
        QVERIFY(r.ok());
        QCOMPARE(texts(r), expected);
    }

    // The basic configuration, field by field.
    void basicConfig() {
        const RlsLoadResult r = parseRlsConfig({{"basic_config.yaml", kBasic}});
        QVERIFY2(r.ok(), qPrintable(texts(r).join('\n')));
        QVERIFY(r.diagnostics.empty());
        const DomainConfig* d = r.config->find("test-domain");
        QVERIFY(d);
        QCOMPARE(d->descriptors.size(), std::size_t(8));
        const DescriptorNode& key1 = d->descriptors[0];
        QCOMPARE(key1.compositeKey, std::string("key1_value1"));
        QVERIFY(!key1.rule);
        QCOMPARE(key1.children.size(), std::size_t(2));
        const RateRule& sub = *key1.children[1].rule;
        QCOMPARE(sub.limits.size(), std::size_t(1));
        QCOMPARE(sub.limits[0].unit, RateUnit::Second);
        QCOMPARE(sub.limits[0].requestsPerUnit, 10u);
        QCOMPARE(sub.limits[0].policy.algorithm, Algorithm::FixedWindow);
        QCOMPARE(sub.limits[0].policy.windowMs, 1000);
        // The original's window: the engine's, on the calendar (the same for every key).
        QCOMPARE(sub.limits[0].policy.align, WindowAlign::Calendar);
        QCOMPARE(sub.limits[0].policy.calendarUnit, CalendarUnit::None);
        QCOMPARE(d->descriptors[5].rule->limits[0].name, std::string("key4_rate_limit"));
        QCOMPARE(d->descriptors[6].key, std::string("key6"));
        QVERIFY(d->descriptors[6].rule->unlimited);
        QVERIFY(d->descriptors[6].rule->limits.empty());
        QVERIFY(d->descriptors[7].detailedMetric);
        QVERIFY(r.config->find("other") == nullptr);
    }

    // YAML 1.1 scalars, as the original's YAML library reads them.
    void scalars() {
        const RlsLoadResult r = parseRlsConfig(
            {{"f.yaml",
              "domain: 123\ndescriptors:\n  - key: on\n    value: 0x1F\n    shadow_mode: yes\n"
              "    quota_mode: On\n    rate_limit: {unit: HOUR, requests_per_unit: 0x10}\n"
              "  - key: b\n    value: '1.5'\n    detailed_metric: n\n"}});
        QVERIFY2(r.ok(), qPrintable(texts(r).join('\n')));
        const DomainConfig& d = r.config->domains[0];
        QCOMPARE(d.domain, std::string("123"));
        QCOMPARE(d.descriptors[0].compositeKey, std::string("on_0x1F"));
        QVERIFY(d.descriptors[0].shadowMode);
        QVERIFY(d.descriptors[0].quotaMode);
        QCOMPARE(d.descriptors[0].rule->limits[0].requestsPerUnit, 16u);
        QCOMPARE(d.descriptors[0].rule->limits[0].unit, RateUnit::Hour);
        QCOMPARE(d.descriptors[1].value, std::string("1.5"));
        QVERIFY(!d.descriptors[1].detailedMetric);
    }

    void wildcards_data() {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("matches");
        QTest::newRow("prefix") << "wild_foo*"
                                << "wild_foo1" << true;
        QTest::newRow("prefix, other") << "wild_foo*"
                                       << "wild_bar" << false;
        QTest::newRow("no star") << "noWild_foo"
                                 << "noWild_foo1" << false;
        QTest::newRow("middle") << "midWild_bar*b"
                                << "midWild_bar123b" << true;
        QTest::newRow("middle, empty") << "midWild_bar*b"
                                       << "midWild_barb" << true;
        QTest::newRow("middle, no end") << "midWild_bar*b"
                                        << "midWild_bara" << false;
        QTest::newRow("middle, no start") << "midWild_bar*b"
                                          << "midWild_xbarb" << false;
        QTest::newRow("two stars") << "multi_foo*bar*baz"
                                   << "multi_foo123bar456baz" << true;
        QTest::newRow("two stars, empty") << "multi_foo*bar*baz"
                                          << "multi_foobarbaz" << true;
        QTest::newRow("two stars, missing part") << "multi_foo*bar*baz"
                                                 << "multi_foo123baz" << false;
        QTest::newRow("path") << "path_/api/*/resource/*/action"
                              << "path_/api/v1/resource/123/action" << true;
        QTest::newRow("overlap") << "a_ab*ba"
                                 << "a_aba" << false;
        QTest::newRow("rpc") << "r_svc*ep*rpc"
                             << "r_svceprpc" << true;
        QTest::newRow("rpc, missing") << "r_svc*ep*rpc"
                                      << "r_svcABCrpc" << false;
    }
    void wildcards() {
        QFETCH(QString, pattern);
        QFETCH(QString, text);
        QFETCH(bool, matches);
        QCOMPARE(wildcardMatches(pattern.toStdString(), text.toStdString()), matches);
    }

    // The ratelab extensions: their meaning, and their problems where they were written.
    void extensions() {
        const RlsLoadResult r = parseRlsConfig({{"f.yaml", R"(domain: d
descriptors:
  - key: remote_address
    identity: remote_address
    rate_limits:
      - unit: second
        requests_per_unit: 10
        ratelab: {algorithm: token_bucket, capacity: 20}
      - unit: day
        requests_per_unit: 10000
        name: daily
  - key: authorization
    identity: authorization
    rate_limit:
      unit: minute
      requests_per_unit: 60
      ratelab: {algorithm: gcra, headers: draft7, on_store_error: deny}
)"}});
        QVERIFY2(r.ok(), qPrintable(texts(r).join('\n')));
        const DomainConfig& d = r.config->domains[0];
        const DescriptorNode& address = d.descriptors[0];
        QCOMPARE(address.identity, Identity::RemoteAddress);
        QCOMPARE(address.rule->limits.size(), std::size_t(2));
        const Policy& bucket = address.rule->limits[0].policy;
        QVERIFY(address.rule->limits[0].extended);
        QCOMPARE(bucket.algorithm, Algorithm::TokenBucket);
        QCOMPARE(bucket.capacity, 20);
        QCOMPARE(bucket.refillPerSecond, 10.0);  // from requests_per_unit per unit
        QVERIFY(!address.rule->limits[1].extended);
        QCOMPARE(address.rule->limits[1].policy.windowMs, 86'400'000);
        QCOMPARE(address.rule->limits[1].policy.align, WindowAlign::Calendar);
        QCOMPARE(bucket.align, WindowAlign::FirstRequest);  // a ratelab block's own
        QCOMPARE(address.rule->limits[1].name, std::string("daily"));
        const DescriptorNode& auth = d.descriptors[1];
        QCOMPARE(auth.identity, Identity::Authorization);
        const Policy& gcra = auth.rule->limits[0].policy;
        QCOMPARE(gcra.algorithm, Algorithm::Gcra);
        QCOMPARE(gcra.capacity, 60);
        QCOMPARE(gcra.refillPerSecond, 1.0);
        QCOMPARE(gcra.headers, HeaderStyle::Draft7);
        QCOMPARE(gcra.onStoreError, StoreErrorRule::Deny);
    }

    void extensionRefusals_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("ratelab block numbers")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
               "      requests_per_unit: 5\n      ratelab:\n        algorithm: sliding_window\n"
               "        window_ms: 0\n        burst: 3\n"
            << QStringList{
                   "f.yaml:9:20: error: window_ms must be between 1 and "
                   "31622400000, found 0",
                   "f.yaml:10:9: error: unknown key 'burst' in the ratelab block "
                   "(algorithm, capacity, refill_per_second, window_ms, delay, nodelay, "
                   "headers, on_store_error)"};
        QTest::newRow("an unknown algorithm")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
               "      requests_per_unit: 5\n      ratelab: {algorithm: bucket}\n"
            << QStringList{
                   "f.yaml:7:28: error: \"bucket\" is not one of \"token_bucket\", "
                   "\"gcra\", \"fixed_window\", \"sliding_window\", \"sliding_log\", "
                   "\"leaky_bucket\", \"haproxy_rate\""};
        QTest::newRow("numbers without an algorithm")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
               "      requests_per_unit: 5\n      ratelab: {capacity: 9}\n"
            << QStringList{
                   "f.yaml:7:27: error: capacity needs an algorithm in the ratelab block "
                   "(without one the limit is the fixed window of requests_per_unit per "
                   "unit)"};
        QTest::newRow("a default that cannot run")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n"
               "      requests_per_unit: 0\n      ratelab: {algorithm: gcra}\n"
            << QStringList{
                   "f.yaml:7:16: error: capacity must be at least 1 for gcra (0 is only a "
                   "leaky_bucket burst or a haproxy_rate threshold) (capacity follows from "
                   "requests_per_unit and unit; write it in the ratelab block)",
                   "f.yaml:7:16: error: refill_per_second must be above 0 and at most "
                   "1000000000, found 0 (refill_per_second follows from "
                   "requests_per_unit and unit; write it in the ratelab block)"};
        QTest::newRow("both rate_limit and rate_limits")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, "
               "requests_per_unit: 1}\n    rate_limits:\n      - {unit: day, requests_per_unit: "
               "9}\n"
            << QStringList{
                   "f.yaml:6:7: error: rate_limit and rate_limits exclude each other: "
                   "write one limit in rate_limit, or all of them in rate_limits"};
        QTest::newRow("unlimited in rate_limits, a repeated limit")
            << "domain: d\ndescriptors:\n  - key: a\n    rate_limits:\n"
               "      - {unit: second, requests_per_unit: 1}\n      - {unlimited: true}\n"
               "      - {unit: second, requests_per_unit: 1}\n"
            << QStringList{
                   "f.yaml:6:21: error: unlimited has no place in rate_limits: write "
                   "rate_limit: {unlimited: true} for a descriptor that is never limited",
                   "f.yaml:7:9: error: this limit repeats the one at line 5"};
        QTest::newRow("identities")
            << "domain: d\ndescriptors:\n  - key: a\n    value: b\n    identity: remote_address\n"
               "  - key: c\n    identity: cookie\n  - key: e*\n    identity: authorization\n"
            << QStringList{
                   "f.yaml:4:12: error: a descriptor with an identity matches every "
                   "value of its key: remove value 'b'",
                   "f.yaml:7:15: error: identity must be remote_address or "
                   "authorization, found 'cookie'",
                   "f.yaml:9:15: error: a descriptor with an identity cannot have a "
                   "wildcard key"};
        QTest::newRow("an extension at the wrong level")
            << "domain: d\nidentity: remote_address\n"
            << QStringList{"f.yaml:2:1: error: config error, unknown key 'identity'"};
    }
    void extensionRefusals() {
        QFETCH(QString, text);
        QFETCH(QStringList, expected);
        const RlsLoadResult r = parseRlsConfig({{"f.yaml", text.toStdString()}});
        QVERIFY(!r.ok());
        QCOMPARE(texts(r), expected);
    }

    // A directory: its *.yaml and *.yml files in name order, not dotfiles, other names or
    // subdirectories; a domain twice across them is an error unless merged.
    void directory() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, const char* text) {
            std::ofstream(dir.filePath(name).toStdString()) << text;
        };
        write("b.yml", "domain: beta\n");
        write("a.yaml", "domain: alpha\n");
        write(".hidden.yaml", "domain: alpha\n");
        write("notes.txt", "not yaml");
        QDir(dir.path()).mkdir("..data");
        write("..data/a.yaml", "domain: alpha\n");
        RlsLoadResult r = loadRlsConfig(dir.path().toStdString());
        QVERIFY2(r.ok(), qPrintable(texts(r).join('\n')));
        QCOMPARE(r.config->domains.size(), std::size_t(2));
        QVERIFY(r.config->find("alpha") && r.config->find("beta"));
        QCOMPARE(r.config->find("alpha")->file, dir.filePath("a.yaml").toStdString());

        write("c.yaml", "domain: alpha\n");
        r = loadRlsConfig(dir.path().toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.size(), std::size_t(1));
        QCOMPARE(r.diagnostics[0].file, dir.filePath("c.yaml").toStdString());
        r = loadRlsConfig(dir.path().toStdString(), RlsLoadOptions{.mergeDomains = true});
        QVERIFY(r.ok());

        r = loadRlsConfig(dir.filePath("missing.yaml").toStdString());
        QVERIFY(r.unreadable);
        QVERIFY(isRlsConfigPath(dir.path().toStdString()));
        QVERIFY(isRlsConfigPath("x.yml"));
        QVERIFY(!isRlsConfigPath("x.json"));
    }

    // Hostile input ends in a diagnostic, never a crash or a hang.
    void limits() {
        std::string deep = "domain: d\ndescriptors:\n";
        std::string indent = "  ";
        for (int i = 0; i < 40; ++i) {
            deep += indent + "- key: k\n" + indent + "  descriptors:\n";
            indent += "    ";
        }
        RlsLoadResult r = parseRlsConfig({{"deep.yaml", deep}});
        QVERIFY(!r.ok());
        std::string aliases = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
        for (char c = 'b'; c <= 'h'; ++c) {
            aliases += std::string(1, c) + ": &" + c + " [";
            for (int i = 0; i < 10; ++i)
                aliases += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
            aliases += "]\n";
        }
        r = parseRlsConfig({{"bomb.yaml", aliases}});
        QVERIFY(!r.ok());
        QVERIFY2(texts(r).join('\n').contains("nodes (aliases included)"),
                 qPrintable(texts(r).join('\n')));
    }
};

QTEST_APPLESS_MAIN(TestRlsConfig)
#include "tst_rls_config.moc"
