// Path regular expressions as ratelab routes (nginx regex locations, HAProxy path_reg): which
// shapes a route says exactly, which approximately (and the approximation named), which not at
// all (and why). Each route written is also checked against ratelab's own route matching on
// paths the expression matches and does not match, with Qt's PCRE as the reference.

#include <QRegularExpression>
#include <QtTest>

#include "formats/import/path_regex.h"
#include "ratelab/policy.h"

using namespace ratelab;
using namespace ratelab::formats;

namespace {

RouteMatch routeOf(const PolicyJson& match) {
    RouteMatch m;
    if (match.contains("path_pattern")) {
        m.pathPrefix.clear();
        m.pathPattern = match["path_pattern"].get<std::string>();
    } else {
        m.pathPrefix = match["path_prefix"].get<std::string>();
    }
    return m;
}

}  // namespace

class TestPathRegex : public QObject {
    Q_OBJECT

private slots:
    void routes_data() {
        QTest::addColumn<QString>("regex");
        QTest::addColumn<bool>("caseless");
        QTest::addColumn<QString>("routes");  // "p:/prefix" or "=/pattern", space-separated
        QTest::addColumn<int>("approximations");
        QTest::addColumn<QString>("why");
        // Paths to try: the routes must agree with the expression on each (when exact).
        QTest::addColumn<QStringList>("paths");
        const QStringList paths{"/",
                                "/login",
                                "/login/",
                                "/loginx",
                                "/signup",
                                "/api",
                                "/api/",
                                "/api/v1",
                                "/api/v1/x",
                                "/users/7/avatar",
                                "/users//avatar",
                                "/users/7/8/avatar",
                                "/a.php",
                                "/static/x.css"};
        auto row = [&](const char* name, const char* regex, bool caseless, const char* routes,
                       int approximations, const char* why) {
            QTest::newRow(name) << regex << caseless << routes << approximations << why << paths;
        };
        row("exact", "^/login$", false, "=/login", 0, "");
        row("alternatives", "^/(login|signup)$", false, "=/login =/signup", 0, "");
        row("non-capturing alternatives", "^/(?:login|signup)$", false, "=/login =/signup", 0, "");
        row("segment of anything but /", "^/users/[^/]+/avatar$", false, "=/users/*/avatar", 0, "");
        row("captured segment", "^/users/([^/]+)/avatar$", false, "=/users/*/avatar", 0, "");
        row("a narrower segment", "^/users/[0-9]+/avatar$", false, "=/users/*/avatar", 1, "");
        row("\\d", "^/users/\\d+/avatar$", false, "=/users/*/avatar", 1, "");
        row("a prefix ending in /", "^/api/", false, "p:/api/", 0, "");
        row("a prefix and .*", "^/api/.*", false, "p:/api/", 0, "");
        row("a byte prefix", "^/api", false, "p:/api", 1, "");
        row("an optional trailing slash", "^/login/?$", false, "=/login", 0, "");
        row("a wildcard then anything", "^/users/[^/]+/", false, "=/users/*/**", 0, "");
        row("case ignored", "^/login$", true, "=/login", 1, "");
        row("escaped dot", "^/a\\.php$", false, "=/a.php", 0, "");
        row("unanchored", "\\.php$", false, "", 0,
            "it is not anchored at the start (\"^\"), so it matches anywhere in the path");
        row("a dot inside", "^/a.c$", false, "", 0,
            "no route says \".\" (any character) other than a final \".*\"");
        row("a class inside a segment", "^/v[0-9]+/x$", false, "", 0,
            "no route says the class \"[0-9]\" inside a path segment");
        row("a class with /", "^/a[/x]+$", false, "", 0,
            "no route says the class \"[/x]\", which admits \"/\"");
        row("an optional group", "^/(a|b)?$", false, "", 0,
            "no route says a repeated or optional group");
        row("an exact /", "^/$", false, "", 0, "no pattern says the exact path \"/\"");
    }
    void routes() {
        QFETCH(QString, regex);
        QFETCH(bool, caseless);
        QFETCH(QString, routes);
        QFETCH(int, approximations);
        QFETCH(QString, why);
        QFETCH(QStringList, paths);
        std::string reason;
        const std::optional<RegexRoutes> got =
            routesFromRegex(regex.toStdString(), caseless, reason);
        if (!why.isEmpty()) {
            QVERIFY(!got.has_value());
            QCOMPARE(QString::fromStdString(reason), why);
            return;
        }
        QVERIFY2(got.has_value(), reason.c_str());
        QStringList written;
        for (const PolicyJson& m : got->matches) {
            written << (m.contains("path_pattern")
                            ? "=" + QString::fromStdString(m["path_pattern"].get<std::string>())
                            : "p:" + QString::fromStdString(m["path_prefix"].get<std::string>()));
        }
        QCOMPARE(written.join(' '), routes);
        QCOMPARE(static_cast<int>(got->approximations.size()), approximations);
        if (approximations > 0) return;
        // Exact: on every sample path (without an empty segment or a trailing "/" that
        // ratelab's routes accept beyond the expression) the routes match as the expression.
        const QRegularExpression re(regex);
        for (const QString& path : paths) {
            if (path.contains("//")) continue;
            bool routed = false;
            for (const PolicyJson& m : got->matches)
                routed = routed || routeOf(m).matches("GET", path.toStdString());
            const bool matched = re.match(path).hasMatch();
            const bool trailingSlashOfExact =
                path.endsWith('/') && path.size() > 1 && re.match(path.chopped(1)).hasMatch();
            const bool prefixItself =
                !matched && got->matches.front().contains("path_prefix") &&
                (path + "/")
                    .startsWith(QString::fromStdString(
                        got->matches.front()["path_prefix"].get<std::string>()));
            if (routed && !matched && (trailingSlashOfExact || prefixItself)) continue;
            QVERIFY2(routed == matched, qPrintable(regex + " on " + path));
        }
    }

    void prefixes() {
        std::string approximation;
        QCOMPARE(prefixRoute("/api/", approximation).dump(),
                 std::string("{\"path_prefix\":\"/api/\"}"));
        QVERIFY(approximation.empty());
        prefixRoute("/api", approximation);
        QVERIFY(approximation.find("\"/apix\" too") != std::string::npos);
        QVERIFY(!exactRoute("/").has_value());
        QVERIFY(!exactRoute("/a*").has_value());
        QCOMPARE(exactRoute("/a/b")->dump(), std::string("{\"path_pattern\":\"/a/b\"}"));
        QCOMPARE(routeSlug(PolicyJson{{"path_pattern", "/users/*/avatar"}}),
                 std::string("users-avatar"));
        QCOMPARE(samplePath(PolicyJson{{"path_pattern", "/users/*/x/**"}}),
                 std::string("/users/x/x"));
    }
};

QTEST_APPLESS_MAIN(TestPathRegex)
#include "tst_path_regex.moc"
