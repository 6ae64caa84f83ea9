// A policy set's routing: "all" (every matching policy charges, in order) and "most_specific"
// (only the policies of the most specific matching route: an exact path, then patterns with more
// literal segments, then longer prefixes; equally specific routes all charge), through the
// limiter, and the field in files.

#include <QtTest>

#include "fixtures/limiter_fixture.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

Policy route(std::string name, std::string prefix, std::string pattern = "",
             std::vector<std::string> methods = {}) {
    Policy p = tokenBucketPolicy(std::move(name), 100, 1.0, std::move(prefix));
    p.match.pathPattern = std::move(pattern);
    p.match.methods = std::move(methods);
    p.key.source = KeySource::Peer;
    return p;
}

PolicySet routes(Routing routing) {
    PolicySet set = policySet({
        route("root", "/"),
        route("api", "/api"),
        route("api-v1", "/api/v1"),
        route("items", "/", "/api/*/items"),
        route("item", "/", "/api/v1/items/*"),
        route("exact", "/", "/api/v1/items"),
        route("api-v1-slash", "/api/v1/"),
        route("login", "/login", "", {"POST"}),
        route("static", "/", "/static/**"),
    });
    set.routing = routing;
    return set;
}

}  // namespace

class TestRouting : public QObject {
    Q_OBJECT

private slots:
    void charged_data() {
        QTest::addColumn<int>("routing");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("policies");  // the policies charged, in order
        const int all = int(Routing::All);
        const int specific = int(Routing::MostSpecific);
        QTest::newRow("all: every prefix") << all << "GET"
                                           << "/api/v1/users"
                                           << "root api api-v1 api-v1-slash";
        QTest::newRow("all: patterns too") << all << "GET"
                                           << "/api/v1/items"
                                           << "root api api-v1 items exact api-v1-slash";
        QTest::newRow("nothing more specific than /") << specific << "GET"
                                                      << "/other"
                                                      << "root";
        QTest::newRow("a prefix over /") << specific << "GET"
                                         << "/api"
                                         << "api";
        QTest::newRow("the prefix's segment") << specific << "GET"
                                              << "/api/x"
                                              << "api";
        QTest::newRow("equal prefixes both charge") << specific << "GET"
                                                    << "/api/v1/users"
                                                    << "api-v1 api-v1-slash";
        QTest::newRow("a pattern over prefixes") << specific << "GET"
                                                 << "/api/v2/items"
                                                 << "items";
        QTest::newRow("an exact path over patterns") << specific << "GET"
                                                     << "/api/v1/items"
                                                     << "exact";
        QTest::newRow("more literal segments first") << specific << "GET"
                                                     << "/api/v1/items/7"
                                                     << "item";
        QTest::newRow("a method-bound route") << specific << "POST"
                                              << "/login"
                                              << "login";
        QTest::newRow("its method unmatched: /") << specific << "GET"
                                                 << "/login"
                                                 << "root";
        QTest::newRow("** over /") << specific << "GET"
                                   << "/static/a/b.css"
                                   << "static";
    }
    void charged() {
        QFETCH(int, routing);
        QFETCH(QString, method);
        QFETCH(QString, path);
        QFETCH(QString, policies);
        const PolicySet set = routes(Routing(routing));
        Limiter limiter(set, makeMemoryStore({}));
        TestRequest r;
        r.from("198.51.100.7");
        r.method = method.toStdString();
        r.path = path.toStdString();
        for (int round = 0; round < 2; ++round) {  // and once more, as the second request
            Verdict v = limiter.decide(r.view(), round * kNanosPerMilli);
            QCOMPARE(v.status, 200);
            QStringList names;
            for (const PolicyResult& result : v.check.policies()) {
                names << QString::fromStdString(set.policies[result.policy].name);
                QCOMPARE(result.decision.remaining, 99 - round);  // each charged once a request
            }
            QCOMPARE(names.join(' '), policies);
        }
    }

    // Most specific also in a batch: requests of several routes decided together.
    void batchLikeOneByOne() {
        const PolicySet set = routes(Routing::MostSpecific);
        Limiter one(set, makeMemoryStore({}));
        Limiter batched(set, makeMemoryStore({}));
        const char* paths[] = {"/api/v1/items",   "/other",        "/api/v1/users", "/api/v2/items",
                               "/api/v1/items/7", "/api/v1/items", "/static/x"};
        std::vector<TestRequest> requests(std::size(paths));
        std::vector<RequestView> views;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            requests[i].from("198.51.100.7");
            requests[i].path = paths[i];
        }
        for (TestRequest& r : requests)
            views.push_back(r.view());
        std::vector<Check> checks(views.size());
        batched.checkBatch(views, 0, checks);
        for (std::size_t i = 0; i < views.size(); ++i) {
            Check single;
            one.check(views[i], 0, single);
            QCOMPARE(checks[i].policies().size(), single.policies().size());
            for (std::size_t k = 0; k < single.policies().size(); ++k) {
                QCOMPARE(checks[i].policies()[k].policy, single.policies()[k].policy);
                QCOMPARE(checks[i].policies()[k].decision.remaining,
                         single.policies()[k].decision.remaining);
            }
        }
    }

    void specificity() {
        auto of = [](std::string prefix, std::string pattern = "") {
            RouteMatch m;
            m.pathPrefix = std::move(prefix);
            m.pathPattern = std::move(pattern);
            return routeSpecificity(m);
        };
        QVERIFY(of("/") < of("/a"));
        QVERIFY(of("/a") < of("/api"));
        QCOMPARE(of("/api/"), of("/api"));
        QVERIFY(of("/a/very/long/prefix/indeed") < of("/", "/**"));
        QVERIFY(of("/", "/**") < of("/", "/api/**"));
        QCOMPARE(of("/", "/api/*"), of("/", "/api/**"));
        QVERIFY(of("/", "/api/*/x/*/y") < of("/", "/"));  // "/" as a pattern is exact
        QCOMPARE(of("/", "/a"), of("/", "/a/b/c"));       // exact paths never meet
    }

    void policyFile() {
        const std::string text =
            "{\"version\": 1, \"routing\": \"most_specific\", \"policies\": "
            "[{\"name\": \"p\"}]}";
        PolicyLoadResult r = parsePolicyText(text, "a.json");
        QVERIFY2(r.ok(), formatDiagnostics(r.diagnostics).c_str());
        QCOMPARE(r.policies->routing, Routing::MostSpecific);
        const std::string saved = savePolicyText(*r.policies);
        QVERIFY(saved.find("\"routing\": \"most_specific\"") != std::string::npos);
        QVERIFY(*parsePolicyText(saved, "b.json").policies == *r.policies);
        r.policies->routing = Routing::All;
        QVERIFY(savePolicyText(*r.policies).find("routing") == std::string::npos);
        r = parsePolicyText(
            "{\"version\": 1,\n \"routing\": \"first\", \"policies\": "
            "[{\"name\": \"p\"}]}",
            "c.json");
        QVERIFY(!r.ok());
        const std::string message = formatDiagnostics(r.diagnostics);
        QCOMPARE(QString::fromStdString(message).trimmed(),
                 QString("c.json:2:13: error: \"first\" is not one of \"all\", "
                         "\"most_specific\" (at /routing)"));
    }
};

QTEST_APPLESS_MAIN(TestRouting)
#include "tst_routing.moc"
