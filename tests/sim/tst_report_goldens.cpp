// Golden hashes of every shipped scenario's run under its own policy: the report JSON without
// its `timing` object, the per-sample CSV series, and the stream of decisions (one line per
// request). They were taken from the simulator before its hot path was batched and pipelined,
// so a faster runner that decides anything differently fails here.
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

#include "identity/sha256.h"
#include "sim/report.h"
#include "sim/scenario_runner.h"
#include "sim_fixture.h"

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
     "e6e5783514ba7f37ef12db43b05ae1c16c8e82644d81993556e14730ddfa4600",
     "2f51bdf4dee422354dacc61557a8c1155edce453a426c6b5505d42a9fe98bc70",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "41bb0511d56c8a3dcc89f44a7e935ce23622c828cdc51cdf891f3432b139c295",
     "ffba097b5a05d9069db61c676100ac24ff948f24b72fb9ab3541b1439995c507",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "1962fe7f31b141d3f1ed0618c8b72e9dce5074b1bcd8e7d7e99a11e4d28cf4ee",
     "1b7c64fba5a3802522c70fd61d62f9d9a52ad4706551d21b8b714803d65f99e1",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "64b83684fdda8dc5e1dfb31275a1dea8f0e033ea8f89541d128bfd4e4bd55afa",
     "e89ed464efb0334a8116b69c91951cc6c89919336a18bb8f381d9c784ad94c69",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "54e58d9c8a795a7385f651f864d68df57982669687952ac06516653c9c8cd2bf",
     "7cb02f9918770c06a4a937e2e7696457673bcaa8ed57acd3a5c52d48e59c6859",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "d57c69c14cfc273109e7bda56eac2594de924bc2d713c6c048b4030791d29da5",
     "665ada678ee4c4222ccb6ab314abb27d1c9ce46d762dd33b0af9b56efe2110f9",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "d2ef7fc81a7afef96c2ddd18ae1caac78d8afcbcc26ab5e054b7d90dfc3bb275",
     "65b73ac515aff9a83d52b90c479e8319dd5d689a622781cf5ada207a92eba375",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "7b037602add81b262469cd1339703b2d20f858681d41c4b245f05d05a7ee31c4",
     "302aa9e977dde72bfc962b3941be366058cd320085ebd0ba4d069775c784921a",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"nat-crowd",
     "563b33d4180e4a02676ccbf3bbeacb53f865eec3671b7cda2f561b72d700b683",
     "16dd671c96f34e5d38be78d5912ed1af03b76a81d5e64786a01813e4518396cf",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "f067042ca77725bc6b283f212276d3e5f2b46cda70763efbeb0dd317bc529209",
     "cddee88f7705596ca0e0e704b1ac18dfeb1530249627c6275cdc4907e900fdf1",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "34f2c710bf482cd6a0c2833f2fc27bddf3dc272d885b4bf8463c2597414c7ece",
     "492284eb06745dfecf941f1a459c301f02729706846e92b0e25d1f3ca35d7630",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "43d94cc6e450e303f5fca77b2ca5190a52dcf379e270d7788bb93143bdef2d10",
     "cf267d42316b69cf96323c5d8f014e7abe86addbd54e4eab1e2bd342f239430a",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "cb83f51f4e650e3df49f0016e78ed8f87ec73f90aad63ab36514234d48f7d486",
     "46e3a316f422c35effb4267a7114c5e0f8c9637216cf4c63c86f20ec7f76fac1",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "3fda42ba3dd14e6f61b35e2f0a8e0d5d50d49294d83b0d26f6b41a169f3997c4",
     "98cf0ba7fd1510d8f4490b330800f88707cd2828831d65de8b5b5cc55649f7e5",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "49dcab406a2d6158460b7a2cd633aacf500c6ed730173972a7be620e4fc7ee0a",
     "ca3da4fb509cffee108f0cf16f9fdf776c7d5b9eae1bfe669ad11c26981ee178",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "d135e97a436c8b0fb29652fa45a65fb98e5305b87c0aca608f27fffea7090c85",
     "e516732053046c9b330f88e31f5e2dabf61c6e090183045776ba949d8a9d9982",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "69a0458f02ff2bb703be2492e8e9e72abd88fd659a2a645e2240711a80d66d14",
     "1256aa81032f99d0eb39130f0a2a2140fccd29a3f6e672cf6699bf62e8a0fb3e",
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
    void everyScenarioHasGoldens();
    void scenario_data();
    void scenario();
};

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
