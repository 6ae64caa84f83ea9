// What the decision listener answers (app/serve/decision_handler.cpp), in both modes: the
// request a proxy describes, the client behind a trusted proxy, refusals as 403 for nginx, and
// the path as proxies route it.

#include <QtTest>

#include "fixtures/serve_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const std::string kPolicies =
    policyText({{"login", "/login", 2}, {"api", "/api", 3}}, "127.0.0.0/8");

void authMode(serve::SidecarOptions& o) {
    o.decision.mode = serve::ServeMode::Auth;
}

void authAs403(serve::SidecarOptions& o) {
    o.decision.mode = serve::ServeMode::Auth;
    o.decision.refuseAs403 = true;
}

HttpAnswer ask(std::uint16_t port, const std::string& request) {
    RawClient c(port);
    c.send(request);
    return c.read();
}

}  // namespace

class TestDecisions : public QObject {
    Q_OBJECT

private slots:
    // Origin mode: the request itself is decided; passes say "ok" with the rate-limit fields.
    void originModeAnswersOk() {
        SidecarUnderTest s(kPolicies);
        QVERIFY2(s.sidecar, s.error.c_str());
        for (int i = 0; i < 3; ++i) {
            const HttpAnswer a = ask(s.port(), get("/api/items"));
            QCOMPARE(a.status, 200);
            QCOMPARE(a.body, std::string("ok\n"));
            QCOMPARE(a.header("ratelimit"),
                     "\"api\";r=" + std::to_string(2 - i) + ";t=" + std::to_string((i + 1) * 1000));
        }
        const HttpAnswer refused = ask(s.port(), get("/api/items"));
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.header("retry-after"), std::string("1000"));
        QCOMPARE(refused.header("content-type"), std::string("application/problem+json"));
        QVERIFY(refused.body.find("\"code\":\"rate_limited\"") != std::string::npos);
        QVERIFY(refused.header("x-ratelab-status").empty());  // auth mode only
        // No policy matches: a pass without fields.
        const HttpAnswer other = ask(s.port(), get("/static/x.css"));
        QCOMPARE(other.status, 200);
        QVERIFY(other.header("ratelimit").empty());
    }

    // Origin mode answers a pass with the status X-Ratelab-Respond asks for and settles it with
    // that status: under charge "failures", 100 sign-ins answered 200 leave the bucket of 5
    // full, five answered 401 pass and the sixth is refused. Nothing refills meanwhile.
    void originModeSettlesWithTheStatusItAnswers() {
        SidecarUnderTest s(R"({ "version": 1, "store": { "kind": "memory" }, "policies": [
            { "name": "login", "match": { "path_prefix": "/login" }, "algorithm": "token_bucket",
              "capacity": 5, "refill_per_second": 0.001, "key": { "source": "peer" },
              "charge": "failures" } ] })");
        QVERIFY2(s.sidecar, s.error.c_str());
        for (int i = 0; i < 100; ++i) {
            const HttpAnswer a = ask(s.port(), get("/login"));
            QCOMPARE(a.status, 200);
            QCOMPARE(a.body, std::string("ok\n"));
            QCOMPARE(a.header("ratelimit"), std::string("\"login\";r=4;t=1000"));
        }
        for (int i = 0; i < 5; ++i) {
            const HttpAnswer a = ask(s.port(), get("/login", "X-Ratelab-Respond: 401\r\n"));
            QCOMPARE(a.status, 401);
            QCOMPARE(a.body, std::string("answered as X-Ratelab-Respond asked\n"));
            QCOMPARE(a.header("ratelimit"), "\"login\";r=" + std::to_string(4 - i) +
                                                ";t=" + std::to_string((i + 1) * 1000));
        }
        QCOMPARE(ask(s.port(), get("/login", "X-Ratelab-Respond: 401\r\n")).status, 429);
        QCOMPARE(ask(s.port(), get("/login")).status, 429);
        const HttpAnswer bad = ask(s.port(), get("/login", "X-Ratelab-Respond: 2OO\r\n"));
        QCOMPARE(bad.status, 400);
        QVERIFY(bad.body.find("X-Ratelab-Respond is not a status from 200 to 599") !=
                std::string::npos);
    }

    // Auth mode never settles: the upstream's status does not come back, and a header asking
    // for one is not an answer. Five passes, then refusals, as if the policy charged always.
    void authModeChargesAsDecided() {
        SidecarUnderTest s(R"({ "version": 1, "store": { "kind": "memory" }, "policies": [
            { "name": "login", "match": { "path_prefix": "/login" }, "algorithm": "token_bucket",
              "capacity": 5, "refill_per_second": 0.001, "key": { "source": "peer" },
              "charge": "failures" } ] })",
                           authMode);
        QVERIFY2(s.sidecar, s.error.c_str());
        const std::string sub =
            get("/auth", "X-Original-URI: /login\r\nX-Ratelab-Respond: 200\r\n");
        for (int i = 0; i < 5; ++i)
            QCOMPARE(ask(s.port(), sub).status, 200);
        QCOMPARE(ask(s.port(), sub).status, 429);
    }

    // Auth mode decides the request the sub-request describes, whichever proxy's headers
    // describe it; the client is the last untrusted X-Forwarded-For hop.
    void authModeDecidesTheDescribedRequest_data() {
        QTest::addColumn<QByteArray>("describe");
        QTest::newRow("nginx") << QByteArray(
            "X-Original-Method: POST\r\nX-Original-URI: /login?next=/\r\n");
        QTest::newRow("traefik") << QByteArray(
            "X-Forwarded-Method: POST\r\nX-Forwarded-Uri: /login\r\nX-Forwarded-Host: "
            "example.com\r\n");
        QTest::newRow("envoy (the line itself)") << QByteArray();
    }
    void authModeDecidesTheDescribedRequest() {
        QFETCH(QByteArray, describe);
        SidecarUnderTest s(kPolicies, authMode);
        QVERIFY2(s.sidecar, s.error.c_str());
        const std::string line =
            describe.isEmpty() ? "POST /login HTTP/1.1\r\n" : "GET /auth HTTP/1.1\r\n";
        auto from = [&](const std::string& client) {
            return ask(s.port(), line + "Host: x\r\n" + describe.toStdString() +
                                     "X-Forwarded-For: 198.51.100.200, " + client + "\r\n\r\n");
        };
        for (int i = 0; i < 2; ++i) {
            const HttpAnswer a = from("203.0.113.1");
            QCOMPARE(a.status, 200);
            QVERIFY(a.body.empty());
            QCOMPARE(a.header("x-ratelab-status"), std::string("200"));
            QCOMPARE(a.header("ratelimit-policy"), std::string("\"login\";q=2;w=2000"));
        }
        const HttpAnswer refused = from("203.0.113.1");
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.header("x-ratelab-status"), std::string("429"));
        QCOMPARE(refused.header("retry-after"), std::string("1000"));
        QVERIFY(refused.body.find("\"violated-policies\":[\"login\"]") != std::string::npos);
        // Another client behind the same proxy has a bucket of its own; the spoofed first hop
        // names nobody.
        QCOMPARE(from("203.0.113.2").status, 200);
    }

    // For nginx auth_request: a refusal travels as 403 with the decided status and the body
    // in headers; the fields stay.
    void refusalsAs403() {
        SidecarUnderTest s(kPolicies, authAs403);
        QVERIFY2(s.sidecar, s.error.c_str());
        const std::string request =
            "GET /auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: /api/v1\r\n"
            "X-Forwarded-For: 192.0.2.9\r\n\r\n";
        for (int i = 0; i < 3; ++i)
            QCOMPARE(ask(s.port(), request).status, 200);
        const HttpAnswer a = ask(s.port(), request);
        QCOMPARE(a.status, 403);
        QCOMPARE(a.header("x-ratelab-status"), std::string("429"));
        QCOMPARE(a.header("retry-after"), std::string("1000"));
        QCOMPARE(a.header("ratelimit"), std::string("\"api\";r=0;t=1000"));
        QCOMPARE(a.header("x-ratelab-problem"), a.body);
        QVERIFY(a.body.find("\"status\":429") != std::string::npos);
        // No identity at all (no trusted hop, no peer rule to fall back on) is 412, as 403 too.
        const std::string nobody =
            "GET /auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: /api/v1\r\nX-Forwarded-For: "
            "bogus\r\n\r\n";
        const HttpAnswer malformed = ask(s.port(), nobody);
        QCOMPARE(malformed.status, 403);
        QCOMPARE(malformed.header("x-ratelab-status"), std::string("412"));
    }

    // The path is matched as proxies route it: tricks that reach /login at the proxy are
    // limited by the login policy.
    void pathTricksMatchTheirPolicy() {
        SidecarUnderTest s(kPolicies, authMode);
        QVERIFY2(s.sidecar, s.error.c_str());
        const char* tricks[] = {"/login", "/./login", "//login", "/api/../login", "/%6cogin"};
        int passed = 0;
        int refused = 0;
        for (const char* target : tricks) {
            const HttpAnswer a =
                ask(s.port(), std::string("GET /auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: ") +
                                  target + "\r\nX-Forwarded-For: 192.0.2.50\r\n\r\n");
            (a.status == 200 ? passed : refused) += 1;
            QVERIFY(a.status == 429 ||
                    a.header("ratelimit-policy").find("login") != std::string::npos);
        }
        QCOMPARE(passed, 2);
        QCOMPARE(refused, 3);
        // A target that is not a path describes nothing to decide.
        const HttpAnswer bad =
            ask(s.port(), "GET /auth HTTP/1.1\r\nHost: x\r\nX-Original-URI: /a%zz\r\n\r\n");
        QCOMPARE(bad.status, 400);
        QVERIFY(bad.body.find("request_undescribed") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestDecisions)
#include "tst_decisions.moc"
