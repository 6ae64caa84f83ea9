// The HAProxy reader and mapping: lines, quotes and sections with their positions; stick
// tables, ACLs, conditions, track-sc and deny rules as policies with HAProxy's rate counter;
// and the warnings and errors each configuration gets. A mapping row is a configuration, the
// policies written (one line each: tests/fixtures/import_fixture.h) and every diagnostic.

#include <QtTest>

#include "fixtures/import_fixture.h"
#include "formats/import/haproxy/haproxy_import.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::formats::haproxy;
using namespace ratelab::testing;

namespace {

const char* const kPeer = "{\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
        s.replace(at, from.size(), to);
    return s;
}

const std::string kDefaults =
    "defaults\n    mode http\n    timeout client 5s\n    timeout server 5s\n"
    "    timeout connect 1s\n";

}  // namespace

class TestHaproxyImport : public QObject {
    Q_OBJECT

private slots:
    void lines_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("words");
        QTest::addColumn<QString>("errors");
        auto row = [](const char* name, const char* text, const char* words, const char* errors) {
            QTest::newRow(name) << text << words << errors;
        };
        row("words and sections", "frontend fe\n  bind :80\n\tacl a  path_beg /x\n",
            "frontend:fe|bind@2:3 :80|acl@3:2 a path_beg /x|", "");
        row("comments end the line, even inside a word", "backend b\n  deny 429#x y\n  # all\n",
            "backend:b|deny@2:3 429|", "");
        row("quotes join with the text around them", "backend b\n  a \"x y\"z 'q\\\"' \"#\"\n",
            "backend:b|a@2:3 x yz q\\\" #|", "");
        row("escapes", "backend b\n  a x\\ y \\x41 \\#\n", "backend:b|a@2:3 x y A #|", "");
        row("unmatched quote", "backend b\n  a \"x\n  c d\n", "backend:b|c@3:3 d|",
            "t.cfg:2:5: error: unmatched double quote\n");
        row("outside a section", "bind :80\nfrontend f\n", "frontend:f|",
            "t.cfg:1:1: error: unknown keyword 'bind' out of section\n");
    }
    void lines() {
        QFETCH(QString, text);
        QFETCH(QString, words);
        QFETCH(QString, errors);
        ImportLog log;
        HaproxyConfig config;
        parseHaproxyText(text.toStdString(), "t.cfg", config, log);
        std::string got;
        for (const HaproxySection& s : config.sections) {
            got += s.kind + ":" + s.name + "|";
            for (const HaproxyLine& l : s.lines) {
                got += l.keyword() + "@" + std::to_string(l.at().line) + ":" +
                       std::to_string(l.at().column);
                for (std::size_t i = 1; i < l.words.size(); ++i)
                    got += " " + l.words[i].text;
                got += "|";
            }
        }
        QCOMPARE(QString::fromStdString(got), words);
        QCOMPARE(QString::fromStdString(formatDiagnostics(log.take())), errors);
    }

    void mapping_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("policies");
        QTest::addColumn<QString>("diagnostics");
        auto row = [](const char* name, std::string config, std::string policies,
                      std::string diagnostics) {
            QTest::newRow(name) << QString::fromStdString(kDefaults + config)
                                << QString::fromStdString(replaceAll(policies, "PEER", kPeer))
                                << QString::fromStdString(diagnostics);
        };
        // Line numbers below count the five lines of kDefaults.
        row("track then deny: refused requests count",
            "frontend fe\n"
            "    stick-table type ipv6 size 100k expire 30s store http_req_rate(10s)\n"
            "    http-request track-sc0 src\n"
            "    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }\n",
            "fe / haproxy_rate capacity=20 window_ms=10000 count_refused=true expire_ms=30000 "
            "key=PEER\n",
            "");
        row("deny then track: refused requests do not count; ge",
            "frontend fe\n"
            "    stick-table type ipv6 size 100k store http_req_rate(1m)\n"
            "    http-request deny deny_status 429 if { src_http_req_rate ge 100 }\n"
            "    http-request track-sc0 src\n",
            "fe / haproxy_rate capacity=99 window_ms=60000 count_refused=false key=PEER\n", "");
        row("a header in a table of its own, named ACLs, methods",
            "frontend fe\n"
            "    acl api path_beg /api/ /v2/\n"
            "    acl write method POST PUT\n"
            "    http-request track-sc1 req.hdr(X-Api-Key) table keys if api write\n"
            "    http-request deny deny_status 429 if api write { sc1_http_req_rate gt 5 }\n"
            "backend keys\n"
            "    stick-table type string len 40 size 1m expire 1m store http_req_rate(10s)\n",
            "keys.api /api/,POST,PUT haproxy_rate capacity=5 window_ms=10000 count_refused=true "
            "expire_ms=60000 key={\"source\":\"header\",\"header\":\"X-Api-Key\",\"when_missing\":"
            "\"skip\"}\n"
            "keys.v2 /v2/,POST,PUT haproxy_rate capacity=5 window_ms=10000 count_refused=true "
            "expire_ms=60000 key={\"source\":\"header\",\"header\":\"X-Api-Key\",\"when_missing\":"
            "\"skip\"}\n",
            ":9:28: warning: req.hdr(X-Api-Key) is the last comma-separated value of the "
            "header's last line; ratelab keys by the header's whole value\n"
            ":9:28: warning: table 'keys' keeps 40 characters of a string key, so values "
            "sharing them share a counter; ratelab keys by the whole value (an empty header is "
            "the key \"\" for HAProxy, skipped by the import)\n");
        row("allow list as bypass; ipmask; tcp-request tracking",
            "frontend fe\n"
            "    acl trusted src 10.0.0.0/8 192.0.2.1\n"
            "    stick-table type ip size 1m expire 10s store http_req_rate(10s)\n"
            "    tcp-request connection track-sc0 src,ipmask(24)\n"
            "    http-request deny deny_status 429 if !trusted { sc0_http_req_rate gt 50 }\n",
            "fe / haproxy_rate capacity=50 window_ms=10000 count_refused=true expire_ms=10000 "
            "key={\"source\":\"peer\",\"ipv4_prefix\":24,\"ipv6_prefix\":128} "
            "bypass=[\"10.0.0.0/8\",\"192.0.2.1/32\"]\n",
            ":9:38: warning: table 'fe' has type ip: HAProxy does not track IPv6 clients (they "
            "are never limited); the import limits them too, each address on its own\n");
        row("deny only on some paths of a counter kept on all",
            "frontend fe\n"
            "    stick-table type ipv6 size 1m store http_req_rate(10s)\n"
            "    http-request track-sc0 src\n"
            "    http-request deny deny_status 429 if { path_beg /login } { sc0_http_req_rate gt 5 "
            "}\n",
            "fe.login /login haproxy_rate capacity=5 window_ms=10000 count_refused=true key=PEER\n",
            ":9:5: warning: HAProxy counts the requests tracked at t.cfg:8 and reads the count on "
            "the requests this rule's paths match; the policy counts and limits the paths /login "
            "only\n"
            ":9:44: warning: path_beg \"/login\" is a prefix of any text (\"/loginx\" too); "
            "ratelab's prefix ends at a segment (\"/login\" and \"/login/...\" only)\n");
        row("tarpit, conn_rate, http_req_cnt, a composite key",
            "frontend fe\n"
            "    stick-table type binary len 20 size 1m expire 1m store "
            "conn_rate(3s),http_req_cnt\n"
            "    http-request track-sc0 base32+src\n"
            "    http-request tarpit if { sc0_conn_rate gt 10 }\n"
            "    http-request deny if { sc0_http_req_cnt gt 1000 }\n",
            "fe.conn_rate / haproxy_rate capacity=10 window_ms=3000 count_refused=true "
            "expire_ms=60000 key={\"source\":\"composite\",\"parts\":[\"route\",\"peer\"],"
            "\"ipv4_prefix\":32,\"ipv6_prefix\":128}\n"
            "fe.http_req_cnt / fixed_window capacity=1000 window_ms=60000 "
            "key={\"source\":\"composite\",\"parts\":[\"route\",\"peer\"],\"ipv4_prefix\":32,"
            "\"ipv6_prefix\":128}\n",
            ":8:5: warning: this counter counts every request before the deny at t.cfg:9 runs; "
            "ratelab does not charge its policy for requests an earlier policy refused\n"
            ":8:28: warning: base32+src counts each client per Host and path; ratelab has no path "
            "key, so the key is the policy's route and the client address (one counter for "
            "every path the route covers)\n"
            ":9:5: warning: tarpit holds a denied request for 'timeout tarpit', then answers 500; "
            "ratelab refuses at once with 429\n"
            ":9:30: warning: conn_rate counts connections (one per request under http-request "
            "tracking); ratelab counts requests\n"
            ":10:5: warning: HAProxy answers a denied request with 403 (the default); ratelab "
            "refuses with 429 (the decisions are the same)\n"
            ":10:28: warning: http_req_cnt only grows until the entry expires (60000 ms after its "
            "last use); the import uses a fixed window of 60000 ms from the key's first "
            "request\n");
        row("peers table",
            "peers mesh\n"
            "    table clients type ipv6 size 1m expire 1m store http_req_rate(10s)\n"
            "frontend fe\n"
            "    http-request track-sc0 src table mesh/clients\n"
            "    http-request deny deny_status 429 if { sc0_http_req_rate gt 9 }\n",
            "mesh-clients / haproxy_rate capacity=9 window_ms=10000 count_refused=true "
            "expire_ms=60000 key=PEER\n",
            "");
        row("errors",
            "frontend fe\n"
            "    stick-table type ipv7 size 1m\n"
            "backend b\n"
            "    stick-table type ip expire 1m\n"
            "backend c\n"
            "    stick-table type ip size 1m store http_req_rate\n"
            "backend d\n"
            "    stick-table type ip size 1m store http_req_rate(10s)\n"
            "    http-request track-sc0 src table nowhere\n"
            "    http-request track-sc1 src\n"
            "    http-request deny if { sc1_http_req_rate gt many }\n"
            "    http-request deny if { sc2_http_req_rate gt 5 }\n"
            "    http-request deny if { src_http_req_rate(gone) gt 5 }\n"
            "    http-request deny if { sc1_http_err_rate gt 5 } nosuchacl\n",
            "",
            ":7:22: error: 'stick-table': unknown type 'ipv7'\n"
            ":9:5: error: 'stick-table': missing size\n"
            ":11:39: error: 'stick-table': data type 'http_req_rate' needs a period, as in "
            "http_req_rate(10s)\n"
            ":14:38: error: 'track-sc0': unable to find table 'nowhere'\n"
            ":16:28: error: 'sc1_http_req_rate' is compared with 'many', which is not an "
            "integer\n"
            ":17:28: error: 'sc2_http_req_rate' reads counter 2, which no track-sc2 rule "
            "tracks\n"
            ":18:28: error: 'src_http_req_rate(gone)': unable to find table 'gone'\n"
            ":19:53: error: no such ACL : 'nosuchacl'\n");
        row("a table in defaults", "defaults\n    stick-table type ip size 1m\n", "",
            ":7:5: error: 'stick-table' is not supported in 'defaults' section\n");
        row("no rate limit",
            "frontend fe\n    bind :80\n    http-request deny if { path_beg /admin }\n", "",
            ": error: no rate limit: the configuration has no stick-table\n");
        row("a table no deny reads",
            "frontend fe\n"
            "    stick-table type ip size 1m store http_req_rate(10s)\n"
            "    http-request track-sc0 src\n",
            "",
            ": error: no rate limit: no deny, tarpit or reject rule compares a stick-table "
            "counter that a track-sc rule counts\n");
    }
    void mapping() {
        QFETCH(QString, config);
        QFETCH(QString, policies);
        QFETCH(QString, diagnostics);
        ImportLog log;
        HaproxyConfig parsed;
        parseHaproxyText(config.toStdString(), "t.cfg", parsed, log);
        const std::optional<PolicyJson> file = mapHaproxyConfig(parsed, log);
        QCOMPARE(QString::fromStdString(diagnosticLines(log.take())), diagnostics);
        QCOMPARE(QString::fromStdString(file ? policyLines(*file) : ""), policies);
        if (file) QVERIFY(!file->contains("routing"));  // HAProxy: every matching rule, in order
    }
};

QTEST_APPLESS_MAIN(TestHaproxyImport)
#include "tst_haproxy_import.moc"
