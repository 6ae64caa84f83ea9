// Golden tests for the HTTP rendering (engine/src/http/rendering.cpp): every header style and
// every problem+json body, byte for byte.

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "fixtures/limiter_fixture.h"
#include "http/rendering.h"
#include "ratelab/json_log_observer.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

std::string allHeaders(const Verdict& v) {
    std::string out;
    for (const HttpHeader& h : v.headers)
        out += h.name + ": " + h.value + "\n";
    return out;
}

// Quota 100 per 60 s (fixed window), request 1 and request 101 from one address.
std::pair<Verdict, Verdict> firstAndRefused(HeaderStyle style) {
    Policy p;
    p.name = "api";
    p.algorithm = Algorithm::FixedWindow;
    p.capacity = 100;
    p.windowMs = 60'000;
    p.headers = style;
    Limiter limiter(policySet({p}), makeMemoryStore({}));
    TestRequest request;
    request.from("198.51.100.7");
    Verdict first = limiter.decide(request.view(), 0);
    for (int i = 0; i < 99; ++i)
        limiter.decide(request.view(), 1'000'000'000);
    Verdict refused = limiter.decide(request.view(), 15'000'000'000);
    return {first, refused};
}

}  // namespace

class TestResponse : public QObject {
    Q_OBJECT

private slots:
    void headerStyles_data() {
        QTest::addColumn<int>("style");
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("refused");
        QTest::newRow("ietf") << int(HeaderStyle::Ietf)
                              << "RateLimit-Policy: \"api\";q=100;w=60\n"
                                 "RateLimit: \"api\";r=99;t=60\n"
                              << "RateLimit-Policy: \"api\";q=100;w=60\n"
                                 "RateLimit: \"api\";r=0;t=45\n"
                                 "Retry-After: 45\n";
        QTest::newRow("draft7") << int(HeaderStyle::Draft7)
                                << "RateLimit-Policy: 100;w=60\n"
                                   "RateLimit: limit=100, remaining=99, reset=60\n"
                                << "RateLimit-Policy: 100;w=60\n"
                                   "RateLimit: limit=100, remaining=0, reset=45\n"
                                   "Retry-After: 45\n";
        QTest::newRow("legacy") << int(HeaderStyle::Legacy)
                                << "X-RateLimit-Limit: 100\n"
                                   "X-RateLimit-Remaining: 99\n"
                                   "X-RateLimit-Reset: 60\n"
                                << "X-RateLimit-Limit: 100\n"
                                   "X-RateLimit-Remaining: 0\n"
                                   "X-RateLimit-Reset: 45\n"
                                   "Retry-After: 45\n";
        QTest::newRow("none") << int(HeaderStyle::None) << ""
                              << "Retry-After: 45\n";
    }
    void headerStyles() {
        QFETCH(int, style);
        QFETCH(QString, first);
        QFETCH(QString, refused);
        auto [ok, no] = firstAndRefused(HeaderStyle(style));
        QCOMPARE(QString::fromStdString(allHeaders(ok)), first);
        QCOMPARE(QString::fromStdString(allHeaders(no)), refused);
    }

    // Several policies in one style append list members (IETF) or advertise the expiring one.
    void severalPoliciesPerStyle() {
        Policy burst = tokenBucketPolicy("burst", 10, 1.0);
        Policy daily;
        daily.name = "daily";
        daily.algorithm = Algorithm::FixedWindow;
        daily.capacity = 1000;
        daily.windowMs = 86'400'000;
        Policy legacyA = burst, legacyB = daily;
        legacyA.headers = legacyB.headers = HeaderStyle::Draft7;
        Limiter ietf(policySet({burst, daily}), makeMemoryStore({}));
        Limiter draft7(policySet({legacyA, legacyB}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1");
        QCOMPARE(allHeaders(ietf.decide(request.view(), 0)),
                 std::string("RateLimit-Policy: \"burst\";q=10;w=10, \"daily\";q=1000;w=86400\n"
                             "RateLimit: \"burst\";r=9;t=1, \"daily\";r=999;t=86400\n"));
        QCOMPARE(allHeaders(draft7.decide(request.view(), 0)),
                 std::string("RateLimit-Policy: 10;w=10, 1000;w=86400\n"
                             "RateLimit: limit=10, remaining=9, reset=1\n"));
    }

    void policyNamesAreEscapedAsStructuredFieldStrings() {
        Policy p = tokenBucketPolicy("we\"ird\\name", 2, 1.0);
        Limiter limiter(policySet({p}), makeMemoryStore({}));
        TestRequest request;
        request.from("192.0.2.1");
        QCOMPARE(headerValue(limiter.decide(request.view(), 0), "RateLimit-Policy"),
                 std::string("\"we\\\"ird\\\\name\";q=2;w=2"));
    }

    void problemBodies_data() {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("body");
        QTest::newRow("rate_limited")
            << "throttle" << 429
            << "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
               "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\","
               "\"status\":429,\"code\":\"rate_limited\","
               "\"detail\":\"Too many requests for policy \\\"api\\\"; retry after 1 s.\","
               "\"violated-policies\":[\"api\"]}";
        QTest::newRow("cost_exceeds_capacity")
            << "cost" << 429
            << "{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
               "\"title\":\"Request costs more than the assigned quota can ever hold\","
               "\"status\":429,\"code\":\"cost_exceeds_capacity\","
               "\"detail\":\"This request costs 3; policy \\\"api\\\" holds at most 1, so it can "
               "never pass.\","
               "\"violated-policies\":[\"api\"]}";
        QTest::newRow("identity_unavailable")
            << "anonymous" << 412
            << "{\"type\":\"urn:ratelab:problem:identity-unavailable\","
               "\"title\":\"No client identity to apply the rate limit to\","
               "\"status\":412,\"code\":\"identity_unavailable\","
               "\"detail\":\"Policy \\\"api\\\" needs a verified principal, a credential or the "
               "client "
               "address, and the request carries none of them.\"}";
        QTest::newRow("store_unavailable")
            << "transport" << 503
            << "{\"type\":\"https://iana.org/assignments/"
               "http-problem-types#temporary-reduced-capacity\","
               "\"title\":\"Rate limiting is temporarily unavailable\","
               "\"status\":503,\"code\":\"store_unavailable\","
               "\"detail\":\"The rate-limit store for policy \\\"api\\\" cannot be reached and the "
               "policy denies on store errors.\"}";
        QTest::newRow("store_refused")
            << "refused" << 503
            << "{\"type\":\"https://iana.org/assignments/"
               "http-problem-types#temporary-reduced-capacity\","
               "\"title\":\"Rate limiting is temporarily unavailable\","
               "\"status\":503,\"code\":\"store_refused\","
               "\"detail\":\"The rate-limit store for policy \\\"api\\\" refused the request.\"}";
    }
    void problemBodies() {
        QFETCH(QString, scenario);
        QFETCH(int, status);
        QFETCH(QString, body);
        Policy p = tokenBucketPolicy("api", 1, 1.0);
        p.onStoreError = StoreErrorRule::Deny;
        auto store = std::make_shared<ScriptedStore>();
        if (scenario == "transport") store->failWith = StoreStatus::Transport;
        if (scenario == "refused") store->failWith = StoreStatus::Refused;
        Limiter limiter(policySet({p}), store);
        TestRequest request;
        if (scenario != "anonymous") request.from("192.0.2.1");
        if (scenario == "cost") request.cost = 3;
        if (scenario == "throttle") limiter.decide(request.view(), 0);
        Verdict v = limiter.decide(request.view(), 0);
        QCOMPARE(v.status, status);
        QCOMPARE(v.contentType, std::string("application/problem+json"));
        QCOMPARE(QString::fromStdString(v.body), body);
        // Every body is valid JSON with the stable code.
        QJsonParseError error;
        QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(v.body), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(doc.object().value("status").toInt(), status);
    }

    // The walk names the policy that refused (Check::refusal()), and every consumer reads it: a
    // shadow policy keyed by a header that has no key goes on to the enforcing principal-only
    // policy, which refuses; the body names the enforcing one, and so does the JSON log's
    // "refused" mark.
    void refusingPolicyIsTheEnforcingOne() {
        Policy shadow = tokenBucketPolicy("shadow-apikey", 10, 1.0);
        shadow.mode = PolicyMode::Shadow;
        shadow.key.source = KeySource::Header;
        shadow.key.header = "X-Api-Key";
        Policy users = tokenBucketPolicy("users", 10, 1.0);
        users.key.source = KeySource::Principal;
        std::vector<std::string> lines;
        JsonLogObserver log([&](std::string_view line) { lines.emplace_back(line); }, 100);
        LimiterOptions options;
        options.observer = &log;
        Limiter limiter(policySet({shadow, users}), makeMemoryStore({}), options);
        TestRequest neither;
        neither.from("192.0.2.1");
        Check check;
        limiter.check(neither.view(), 0, check);
        QCOMPARE(check.status, 412);
        QVERIFY(check.refusal() != nullptr);
        QCOMPARE(check.refusal()->policy, std::uint32_t(1));
        QCOMPARE(check.policies().size(), std::size_t(2));
        QCOMPARE(check.policies()[0].outcome, PolicyOutcome::NoIdentity);

        Verdict v = limiter.decide(neither.view(), 0);
        QCOMPARE(v.status, 412);
        const QJsonObject body =
            QJsonDocument::fromJson(QByteArray::fromStdString(v.body)).object();
        QCOMPARE(body.value("detail").toString(),
                 QString("Policy \"users\" needs a verified principal, a credential or the "
                         "client address, and the request carries none of them."));

        // Two lines per request: the shadow policy's and the refusing one's, marked.
        QCOMPARE(lines.size(), std::size_t(4));
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const QJsonObject line =
                QJsonDocument::fromJson(QByteArray::fromStdString(lines[i])).object();
            const bool refusing = line.value("policy").toString() == "users";
            QCOMPARE(line.value("refused").toBool(false), refusing);
            QCOMPARE(line.value("policy").toString(), QString(i % 2 ? "users" : "shadow-apikey"));
        }

        // A request with a principal passes both: nothing refused it.
        TestRequest signedIn;
        signedIn.from("192.0.2.1").principal = "alice";
        limiter.check(signedIn.view(), 0, check);
        QCOMPARE(check.status, 200);
        QVERIFY(check.refusal() == nullptr);
    }

    void retryAfterIsWholeSecondsRoundedUpAtLeastOne_data() {
        QTest::addColumn<qint64>("nanos");
        QTest::addColumn<qint64>("seconds");
        QTest::newRow("1 ns") << qint64(1) << qint64(1);
        QTest::newRow("0.9 s") << qint64(900'000'000) << qint64(1);
        QTest::newRow("1 s") << qint64(1'000'000'000) << qint64(1);
        QTest::newRow("1 s + 1 ns") << qint64(1'000'000'001) << qint64(2);
        QTest::newRow("0") << qint64(0) << qint64(1);
    }
    void retryAfterIsWholeSecondsRoundedUpAtLeastOne() {
        QFETCH(qint64, nanos);
        QFETCH(qint64, seconds);
        QCOMPARE(http::ceilSeconds(nanos, 1), seconds);
    }
};

QTEST_APPLESS_MAIN(TestResponse)
#include "tst_rendering.moc"
