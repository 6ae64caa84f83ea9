// The nginx mapping: limit_req zones, keys and parameters, nginx's inheritance of limit_req
// lists, locations as routes, and the warnings and errors each configuration gets. A row is a
// configuration, the policies written (one line each: tests/fixtures/import_fixture.h) and
// every diagnostic.

#include <QtTest>

#include "fixtures/import_fixture.h"
#include "formats/export/export_targets.h"
#include "formats/import/nginx/nginx_import.h"

using namespace ratelab;
using namespace ratelab::formats;
using namespace ratelab::testing;

namespace {

const char* const kPeer = "{\"source\":\"peer\",\"ipv4_prefix\":32,\"ipv6_prefix\":128}";

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
        s.replace(at, from.size(), to);
    return s;
}

}  // namespace

class TestNginxImport : public QObject {
    Q_OBJECT

private slots:
    void mapping_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("policies");
        QTest::addColumn<QString>("diagnostics");
        auto row = [](const char* name, std::string config, std::string policies,
                      std::string diagnostics) {
            QTest::newRow(name) << QString::fromStdString(config)
                                << QString::fromStdString(replaceAll(policies, "PEER", kPeer))
                                << QString::fromStdString(diagnostics);
        };
        const std::string ipv6 =
            "warning: nginx keys each IPv6 address on its own; the import keeps that "
            "(ipv6_prefix 128), where ratelab would group a /64 that one client holds\n";
        row("rates exactly",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=10r/s;\n"
            "  limit_req_zone $remote_addr zone=b:1m rate=9r/m;\n"
            "  limit_req_zone $binary_remote_addr zone=c:1m rate=7;\n"
            "  limit_req_status 429;\n"
            "  server { location /a/ { limit_req zone=a burst=5 nodelay; }\n"
            "           location /b/ { limit_req zone=b; }\n"
            "           location /c/ { limit_req zone=c burst=4 delay=2; } }\n"
            "}\n",
            "a.a /a/ leaky_bucket capacity=5 refill_per_second=10 nodelay=true key=PEER\n"
            "b.b /b/ leaky_bucket capacity=0 refill_per_second=0.15 key=PEER\n"
            "c.c /c/ leaky_bucket capacity=4 refill_per_second=7 delay=2 key=PEER\n",
            ":2:18: " + ipv6 + ":3:18: " + ipv6 + ":4:18: " + ipv6);
        row("a file included inside http (conf.d, sites-enabled)",
            "limit_req_zone $binary_remote_addr zone=a:1m rate=2r/s;\n"
            "limit_req_status 429;\n"
            "server { location /api/ { limit_req zone=a burst=3; } }\n",
            "a.api /api/ leaky_bucket capacity=3 refill_per_second=2 key=PEER\n",
            ":1:1: warning: no http block: the file is read as the inside of one, as nginx reads "
            "a file included there (conf.d/*.conf, sites-enabled/*)\n:1:16: " +
                ipv6);
        {
            // The export's own map of $remote_addr to address groups reads back as the
            // grouping it says; the limits of a file without servers reach its includers'.
            std::string map = "map $remote_addr $grouped {\n";
            for (const formats::NginxMapEntry& e : formats::nginxAddressMap(24, 48))
                map += "  \"~" + e.pattern + "\" \"" + e.value + "\";\n";
            map += "  default $remote_addr;\n}\n";
            row("the export's address map, at the http level only",
                map +
                    "limit_req_zone $grouped zone=g:1m rate=5r/s;\nlimit_req zone=g;\n"
                    "limit_req_status 429;\n",
                "g / leaky_bucket capacity=0 refill_per_second=5 "
                "key={\"source\":\"peer\",\"ipv4_prefix\":24,\"ipv6_prefix\":48}\n",
                ":1:1: warning: no http block: the file is read as the inside of one, as nginx "
                "reads a file included there (conf.d/*.conf, sites-enabled/*)\n"
                ":1:1: warning: no server block: the limits are read as applying to every "
                "request of the servers that include the file; a location there with "
                "limit_req lines of its own would not inherit them\n");
        }
        row("inheritance: a level with its own limit_req inherits none",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n"
            "  limit_req_zone $http_x_key zone=k:1m rate=2r/s;\n"
            "  limit_req_status 429;\n"
            "  limit_req zone=a burst=1;\n"
            "  server {\n"
            "    location /own/ { limit_req zone=k; }\n"
            "    location /inherit/ { }\n"
            "    location /own/more/ { }\n"
            "  }\n"
            "}\n",
            "a / leaky_bucket capacity=1 refill_per_second=1 key=PEER\n"
            "k.own /own/ leaky_bucket capacity=0 refill_per_second=2 "
            "key={\"source\":\"header\",\"header\":\"x-key\",\"when_missing\":\"skip\"}\n"
            "a.own-more /own/more/ leaky_bucket capacity=1 refill_per_second=1 key=PEER\n",
            ":2:3: warning: zone \"a\" is charged by 2 policies (limit_req at t.conf:5): nginx "
            "keeps one state per key for all of them, each ratelab policy keeps its own\n"
            ":2:18: " +
                ipv6);
        row("zones of one key: one policy with several limits",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=fast:1m rate=10r/s;\n"
            "  limit_req_zone $binary_remote_addr zone=slow:1m rate=30r/m;\n"
            "  limit_req_status 429;\n"
            "  server { location / { limit_req zone=fast burst=10 nodelay;\n"
            "                        limit_req zone=slow burst=5; } }\n"
            "}\n",
            "fast-slow / [fast leaky_bucket capacity=10 refill_per_second=10 nodelay=true] "
            "[slow leaky_bucket capacity=5 refill_per_second=0.5] key=PEER\n",
            ":2:18: " + ipv6 + ":3:18: " + ipv6);
        row("zones of different keys: separate policies, warned",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=ip:1m rate=10r/s;\n"
            "  limit_req_zone $http_authorization zone=tok:1m rate=5r/s;\n"
            "  limit_req_status 429;\n"
            "  server { location /api/ { limit_req zone=ip;\n"
            "                            limit_req zone=tok; } }\n"
            "}\n",
            "ip.api /api/ leaky_bucket capacity=0 refill_per_second=10 key=PEER\n"
            "tok.api /api/ leaky_bucket capacity=0 refill_per_second=5 "
            "key={\"source\":\"header\",\"header\":\"authorization\",\"when_missing\":\"skip\"}\n",
            ":2:18: " + ipv6 +
                ":6:29: warning: nginx charges none of these limits when one refuses a request; "
                "their keys differ (zone ip: the client address; zone tok: the header "
                "authorization), so they become separate policies, and a request one refuses "
                "stays charged by the policies before it\n");
        row("keys: constant, composite, literal with a header",
            "http {\n"
            "  limit_req_zone $server_name zone=all:1m rate=100r/s;\n"
            "  limit_req_zone \"$binary_remote_addr$http_x_key\" zone=pair:1m rate=1r/s;\n"
            "  limit_req_zone k:$http_x_tenant zone=tenant:1m rate=1r/s;\n"
            "  limit_req_zone $request_method$binary_remote_addr zone=m:1m rate=1r/s;\n"
            "  limit_req_status 429;\n"
            "  server { location = /all { limit_req zone=all; }\n"
            "           location = /pair { limit_req zone=pair; }\n"
            "           location = /tenant { limit_req zone=tenant; }\n"
            "           location = /m { limit_req zone=m; } }\n"
            "}\n",
            "all.all =/all leaky_bucket capacity=0 refill_per_second=100 "
            "key={\"source\":\"composite\",\"parts\":[\"route\"]}\n"
            "pair.pair =/pair leaky_bucket capacity=0 refill_per_second=1 "
            "key={\"source\":\"composite\",\"parts\":[\"peer\",\"header:x-key\"],\"ipv4_prefix\":"
            "32,\"ipv6_prefix\":128,\"when_missing\":\"peer\"}\n"
            "tenant.tenant =/tenant leaky_bucket capacity=0 refill_per_second=1 "
            "key={\"source\":\"header\",\"header\":\"x-tenant\",\"when_missing\":\"shared\"}\n"
            "m.m =/m leaky_bucket capacity=0 refill_per_second=1 "
            "key={\"source\":\"composite\",\"parts\":[\"method\",\"peer\"],\"ipv4_prefix\":32,"
            "\"ipv6_prefix\":128}\n",
            ":3:18: " + ipv6 + ":5:18: " + ipv6);
        row("dry run and status",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n"
            "  server { limit_req_dry_run on;\n"
            "    location / { limit_req zone=a; }\n"
            "    location /live/ { limit_req zone=a; limit_req_dry_run off;\n"
            "                      limit_req_status 502; } }\n"
            "}\n",
            "a / leaky_bucket capacity=0 refill_per_second=1 key=PEER shadow\n"
            "a.live /live/ leaky_bucket capacity=0 refill_per_second=1 key=PEER\n",
            ":2:3: warning: zone \"a\" is charged by 2 policies (limit_req at t.conf:4, "
            "t.conf:5): nginx keeps one state per key for all of them, each ratelab policy "
            "keeps its own\n:2:18: " +
                ipv6 +
                ":4:18: warning: nginx refuses with 503 (limit_req_status's default); ratelab "
                "refuses with 429 (the decisions are the same)\n"
                ":6:23: warning: nginx refuses with 502; ratelab refuses with 429 (the decisions "
                "are the same)\n");
        row("regex locations",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n"
            "  limit_req_status 429;\n"
            "  server {\n"
            "    location ~ ^/users/[^/]+/avatar$ { limit_req zone=a; }\n"
            "    location ~* ^/(login|signup)$ { limit_req zone=a; }\n"
            "    location ~ \\.php$ { limit_req zone=a; }\n"
            "  }\n"
            "}\n",
            "a.users-avatar =/users/*/avatar leaky_bucket capacity=0 refill_per_second=1 key=PEER\n"
            "a.login =/login leaky_bucket capacity=0 refill_per_second=1 key=PEER\n"
            "a.signup =/signup leaky_bucket capacity=0 refill_per_second=1 key=PEER\n",
            ":2:3: warning: zone \"a\" is charged by 3 policies (limit_req at t.conf:5, "
            "t.conf:6): nginx keeps one state per key for all of them, each ratelab policy keeps "
            "its own\n" +
                std::string(":2:18: ") + ipv6 +
                ":6:17: warning: regex location \"^/(login|signup)$\": the expression ignores "
                "case; ratelab's routes compare paths case by case\n"
                ":7:16: warning: regex location \"\\.php$\": it is not anchored at the start "
                "(\"^\"), so it matches anywhere in the path: the location's limits are not "
                "imported\n");
        row("return answers before limit_req",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n"
            "  limit_req_status 429;\n"
            "  server { limit_req zone=a;\n"
            "    location = /health { return 200; }\n"
            "    location /x/ { }\n"
            "  }\n"
            "}\n",
            "a / leaky_bucket capacity=0 refill_per_second=1 key=PEER\n",
            ":2:18: " + ipv6 +
                ":5:5: warning: nginx limits no request of location = /health (`return` answers "
                "before limit_req runs); ratelab's most specific route for \"/health\" is the "
                "server (t.conf:4), whose limits it charges\n");
        row("two servers",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;\n"
            "  limit_req_status 429;\n"
            "  server { server_name a.example; location / { limit_req zone=a; } }\n"
            "  server { server_name b.example; location / { limit_req zone=a; } }\n"
            "  server { server_name c.example; location / { limit_req zone=a burst=9; } }\n"
            "}\n",
            "a / leaky_bucket capacity=0 refill_per_second=1 key=PEER\n"
            "a-2 / leaky_bucket capacity=9 refill_per_second=1 key=PEER\n",
            ":2:3: warning: zone \"a\" is charged by 2 policies (limit_req at t.conf:4, "
            "t.conf:6): nginx keeps one state per key for all of them, each ratelab policy "
            "keeps its own\n:2:18: " +
                ipv6 +
                ":6:3: warning: ratelab does not tell server blocks apart (server_name "
                "c.example): this server's limits apply to requests for every host, beside "
                "those of the server at t.conf:4\n");
        row("geo and map allow list",
            "http {\n"
            "  geo $limited { default 1; 10.0.0.0/8 0; 192.0.2.1 0; }\n"
            "  map $limited $limit_key { 0 \"\"; 1 $binary_remote_addr; }\n"
            "  limit_req_zone $limit_key zone=a:1m rate=1r/s;\n"
            "  limit_req_status 429;\n"
            "  server { location / { limit_req zone=a; } }\n"
            "}\n",
            "a / leaky_bucket capacity=0 refill_per_second=1 key=PEER "
            "bypass=[\"10.0.0.0/8\",\"192.0.2.1/32\"]\n",
            ":4:18: warning: $limit_key (map at t.conf:3) gives $binary_remote_addr, and an "
            "empty key, which nginx does not limit, to 2 address ranges: they bypass the "
            "policy\n:4:18: " +
                ipv6);
        row("errors",
            "http {\n"
            "  limit_req_zone $binary_remote_addr zone=a:1m rate=1.5r/s;\n"
            "  limit_req_zone $binary_remote_addr zone=b:16k rate=1r/s;\n"
            "  limit_req_zone $binary_remote_addr zone=c:1m rate=1r/s sync;\n"
            "  limit_req_zone $binary_remote_addr rate=1r/s zone=d:1m;\n"
            "  limit_req_zone $remote_addr zone=d:1m rate=2r/s;\n"
            "  server { limit_req zone=none;\n"
            "    location / { limit_req zone=d burst=0; limit_req zone=d delay=x; }\n"
            "    location /x/ { if ($a) { limit_req zone=d; } limit_req_status 600; }\n"
            "    location /y/ { limit_req zone=d; limit_req zone=d; limit_req_dry_run maybe; }\n"
            "    location /z/ { location /q/ { } }\n"
            "  }\n"
            "  limit_req burst=2;\n"
            "}\n"
            "limit_req zone=d;\n",
            "",
            ":2:48: error: invalid rate \"rate=1.5r/s\"\n"
            ":3:38: error: zone \"zone=b:16k\" is too small\n"
            ":4:3: error: invalid number of arguments in \"limit_req_zone\" directive\n"
            ":5:18: " +
                ipv6 +
                ":6:3: error: limit_req_zone \"d\" is already bound to key "
                "\"$binary_remote_addr\" (at t.conf:5)\n"
                ":7:22: error: limit_req names the zone \"none\", which no limit_req_zone "
                "declares\n"
                ":8:35: error: invalid burst value \"burst=0\"\n"
                ":8:61: error: invalid delay value \"delay=x\"\n"
                ":9:30: error: \"limit_req\" directive is not allowed here (in \"if\")\n"
                ":9:67: error: value must be between 400 and 599\n"
                ":10:38: error: \"limit_req\" directive is duplicate (zone \"d\" at t.conf:10)\n"
                ":10:74: error: invalid value \"maybe\" in \"limit_req_dry_run\" directive, it "
                "must be \"on\" or \"off\"\n"
                ":11:20: error: location \"/q/\" is outside location \"/z/\"\n"
                ":13:3: error: \"limit_req\" must have \"zone\" parameter\n"
                ":15:1: error: \"limit_req\" directive is not allowed here (in the main level)\n");
        row("no rate limit", "http { server { location / { proxy_pass http://x; } } }\n", "",
            ": error: no rate limit: the configuration declares no limit_req_zone\n");
        row("a zone nothing uses",
            "http { limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s; server { } }\n", "",
            ": error: no rate limit: no limit_req applies to any location that can be imported\n"
            ":1:8: warning: zone \"a\" is declared but no limit_req uses it: not imported\n"
            ":1:23: " +
                ipv6);
    }
    void mapping() {
        QFETCH(QString, config);
        QFETCH(QString, policies);
        QFETCH(QString, diagnostics);
        ImportLog log;
        const nginx::NginxConfig parsed =
            nginx::parseNginxText(config.toStdString(), "t.conf", "", log);
        const std::optional<PolicyJson> file = nginx::mapNginxConfig(parsed, log);
        const std::string got = diagnosticLines(log.take());
        QCOMPARE(QString::fromStdString(got), diagnostics);
        QCOMPARE(QString::fromStdString(file ? policyLines(*file) : ""), policies);
        if (file) {
            QCOMPARE(file->value("routing", ""), std::string("most_specific"));
        }
    }
};

QTEST_APPLESS_MAIN(TestNginxImport)
#include "tst_nginx_import.moc"
