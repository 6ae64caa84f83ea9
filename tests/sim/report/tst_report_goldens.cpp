// Golden hashes of every shipped scenario's run under its own policy: the report JSON without
// its `timing` object, the per-sample CSV series, and the stream of decisions (one line per
// request). They were taken from the simulator before its hot path was batched and pipelined,
// so a faster runner that decides anything differently fails here. CTest runs them twice: as
// built, and as on a machine of 32 hardware threads (tst_report_goldens_32_threads), since the
// same scenario, policy and seed must give the same bytes on every machine.
//
// The goldens pin today's report format too. When a change to the report, the series, the
// decision records or a decision is intended, regenerate them and say so in the commit:
//     RATELAB_PRINT_GOLDENS=1 build/tests/sim/tst_report_goldens
// prints the table below with the new hashes (it still fails, so a stale table cannot pass by
// accident); RATELAB_PRINT_GOLDENS=store-oom,plan-tiers prints only those rows.
// tst_batch_equivalence compares the batched runner with the one-by-one runner directly, so that
// guarantee does not rest on these hashes alone.

#include <QtTest>

#include <QDir>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "identity/sha256.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"
#include "fixtures/sim_fixture.h"

using namespace ratelab;
using namespace ratelab::sim;
using namespace ratelab::simtest;

namespace {

const std::string kRoot = RATELAB_SOURCE_DIR;

struct Golden {
    const char* scenario;
    const char* report;     // SHA-256 of reportJson() without "timing"
    const char* series;     // SHA-256 of seriesCsv()
    const char* decisions;  // SHA-256 of the decision lines
};

// clang-format off
constexpr Golden kGoldens[] = {
    {"address-minting",
     "2d3b3b24a2e9bf9ece91a887673cdffb315930af8352c0abc6477fed0177de00",
     "f8898d67a57b88249457927f7a621f39943033f8ee8fd3a265d4eb9242e9d15d",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "070b04a4560440af9924e729e56f191e11a22ebcfa5a8cf043e403270b3fe711",
     "ffba097b5a05d9069db61c676100ac24ff948f24b72fb9ab3541b1439995c507",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "568d3313c92a443e2398e36a74cdf0a69e6f7fa5bf84ea457bc88002af8edb39",
     "a4402d99d725f2621249be1ade115b871ffa2496eb274667900c2e81d3bcde14",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "ffc1c2fc473b6693da3441a0ab91fa70e766bf87f6ef27e81ffef8163658e4f4",
     "11bc09542eeab30657c8ee759d0c101a45806a775cf7c08956c648b721e65874",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "3ea873bc3050d4d7c0386ffbdb77d55e861c0bb0d4f7ea8bc5a1a0e4c539585a",
     "5066234890ed3e68049e1241de12ce3531f46359a5ee6e33001bf1cb641b4a4c",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "73af408d9837133e3cd54c3eeac25c4f6689a06333007478498170a4d23b3850",
     "f609d771a44e022765eed2f81786c665d530ab77dae644a48f42c84cd66c2bcd",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "d2693b448fac90afdc4875c0a27ede5b3ce3186ed5158c7391ce7e0e5a3abba7",
     "0507a430f5c6afdaf9a7f2a270f115fa351a2ca07e3eb41f3b8a7968e9a72713",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "5fbd6e56b0aecc4c7e02314e952c1a925c699409b32fd1d8972c59eb72a5643d",
     "7683d34f4508dabdb614edb63de24144718f81093fcacdba0cc522a2720f6965",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "e220e801a04d45c11bb6736256f5f99064009fea0bade8c691a3e95dc8a72cdd",
     "f46ee3eb59aa9cf2f0da36f580ffb86c93e64c6d21c00e529489f25f2932b086",
     "cccd43407f0ae3df3245aff8bb4ee2850bd452dc7599986cdb278490dbea92b0"},
    {"nat-crowd",
     "c1401bff7cb2d51c72ad85884fb9d512fa0d3fad89c9d13c594022bdf556b705",
     "2e2bc6a1ae648b1e059a367fb28c492f6c8245772b633281bf1833a938067d65",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "7a5b891ca7b866605d2f00c334438f1ea56e3140935d98fbbc72b172dd100785",
     "dd727ba3d3b1b1d1393d7e1de96c12a3fb16c350f9e810fa88bb4f430891707c",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "510eacc5bd0f7eed6db5af2fbefe011133161b8acf993b533a478ed85d24bd8a",
     "492284eb06745dfecf941f1a459c301f02729706846e92b0e25d1f3ca35d7630",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "d4bea9d651bc572da7c948f3d26cdb62a6e6ba5a5c86866915c0dfc5ce801345",
     "a28c5ab84cdd6932b4939ac7cfe66440d52e443b484622d50da3d80fd2cb6cb5",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "d488d591be050e365e9acac1b2db87710d0d67d84a23c7f3bef444df910503ea",
     "5f5e65c8234f1c1f9f52c4ef6eda2f8a14c2b40d4b613426e3ac8bd11fbec069",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "44e782410a3fca8e1533ed37684e3fddee49aa8f6a17f6ff177e19bbc45e3ff6",
     "98296cf7b8dba3844c05f1abc2e0e16a7b32c9447113e3aed1fd86140abd70f6",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "c04ac8357aa87176f411d8b830795057198eff9a68846762c437ab22fe241f66",
     "7b1b17529cd989a4c83e36cb9e569f2d925b7c850a0f2bb82ae8ba8b4f0fbdae",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "e023b671e4f87d5765a2d488089ab406dd304080ee53517d03ab37a020600d82",
     "43dc95018bca6ff87c97c76450b4b21915f582bd53412317c669d2da5f97205c",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "441fd55d432c7f037efe0150cf7397a4f97dc00ef0525455ca5116166af6aa34",
     "7971b9ba1689e70b6e27c77b40badb2d7ab29102c4f8ad3feb3f17a2c33a5610",
     "f4016ec8157c8e33d69140d15f34aeeff5c8e8336ef61ca62c46656bb25f5043"},
};
// clang-format on

std::string sha256(const std::string& text) {
    char hex[identity::kSha256HexLength];
    if (!identity::sha256Hex(text, hex)) qFatal("SHA-256 failed");
    return std::string(hex, sizeof hex);
}

// Every decision as one line of text, hashed as a whole at the end. A run of millions of
// decisions (address-minting's 10^7) folds its text into its hash every 64 MiB, so the text
// never holds more than that; smaller runs hash exactly as before.
class DecisionText final : public DecisionSink {
public:
    std::string text;
    static constexpr std::size_t kFoldAt = 64u << 20;
    void onDecision(const DecisionRecord& d) override {
        if (text.size() >= kFoldAt) text = sha256(text);
        appendDecisionLine(d, text);
    }
};

struct Hashes {
    std::string report;
    std::string series;
    std::string decisions;
};

Hashes runShipped(const std::string& name) {
    ScenarioLoadResult loaded = loadScenarioFile(kRoot + "/scenarios/" + name + ".json");
    if (!loaded.ok()) qFatal("scenario %s does not load", name.c_str());
    const Scenario& s = *loaded.scenario;
    const PolicySet policies =
        policyFile(QDir(QString::fromStdString(kRoot))
                       .relativeFilePath(QString::fromStdString(s.policyPath))
                       .toStdString());
    // The report and series of a plain run (what `ratelab-cli run` writes), and the decisions
    // of a second run that streams them (which also fills each policy's key).
    ScenarioRunner runner(s, policies);
    runner.runToEnd();
    nlohmann::ordered_json report =
        nlohmann::ordered_json::parse(reportJson(buildReport(runner, Timing{})));
    report.erase("timing");
    DecisionText decisions;
    RunnerOptions options;
    options.decisions = &decisions;
    ScenarioRunner streamed(s, policies, options);
    streamed.runToEnd();
    if (reportJson(buildReport(streamed, Timing{})) != reportJson(buildReport(runner, Timing{})))
        qFatal("%s: streaming the decisions changed the report", name.c_str());
    return Hashes{sha256(report.dump(2) + "\n"),
                  sha256(seriesCsv(runner.classNames(), runner.samples())), sha256(decisions.text)};
}

QStringList shippedNames() {
    QDir dir(QString::fromStdString(kRoot + "/scenarios"));
    QStringList names;
    for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name))
        names << f.chopped(5);
    return names;
}

}  // namespace

class TestReportGoldens : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void everyScenarioHasGoldens();
    void scenario_data();
    void scenario();
};

// Run as on another machine (tests/sim/CMakeLists.txt), the suite first makes sure it is.
void TestReportGoldens::initTestCase() {
    if (const char* expected = std::getenv("RATELAB_EXPECT_HARDWARE_THREADS")) {
        QCOMPARE(std::thread::hardware_concurrency(), static_cast<unsigned>(std::atoi(expected)));
    }
}

void TestReportGoldens::everyScenarioHasGoldens() {
    if (const char* print = std::getenv("RATELAB_PRINT_GOLDENS")) {
        const QStringList only = QString(print) == "1" ? QStringList() : QString(print).split(',');
        for (const QString& name : shippedNames()) {
            if (!only.isEmpty() && !only.contains(name)) continue;
            const Hashes h = runShipped(name.toStdString());
            std::printf("    {\"%s\",\n     \"%s\",\n     \"%s\",\n     \"%s\"},\n",
                        qPrintable(name), h.report.c_str(), h.series.c_str(), h.decisions.c_str());
        }
        QFAIL("printed the goldens; paste them into kGoldens");
    }
    QStringList golden;
    for (const Golden& g : kGoldens)
        golden << g.scenario;
    QCOMPARE(golden, shippedNames());
}

void TestReportGoldens::scenario_data() {
    QTest::addColumn<QString>("name");
    for (const Golden& g : kGoldens)
        QTest::newRow(g.scenario) << g.scenario;
}

void TestReportGoldens::scenario() {
    QFETCH(QString, name);
    const Golden* golden = nullptr;
    for (const Golden& g : kGoldens) {
        if (name == g.scenario) golden = &g;
    }
    QVERIFY(golden);
    const Hashes h = runShipped(name.toStdString());
    QCOMPARE(h.decisions, std::string(golden->decisions));
    QCOMPARE(h.series, std::string(golden->series));
    QCOMPARE(h.report, std::string(golden->report));
}

QTEST_APPLESS_MAIN(TestReportGoldens)
#include "tst_report_goldens.moc"
