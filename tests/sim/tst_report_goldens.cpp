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
     "c0fbcdf7db3f08a905291e3cd427f2c07999898b5d438bc7b430efb56d25970f",
     "2f51bdf4dee422354dacc61557a8c1155edce453a426c6b5505d42a9fe98bc70",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "070b04a4560440af9924e729e56f191e11a22ebcfa5a8cf043e403270b3fe711",
     "ffba097b5a05d9069db61c676100ac24ff948f24b72fb9ab3541b1439995c507",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "47daef728c2f8a8db22cc0e2db85652df4419a3f0c704c6588893658c8a3f736",
     "1b7c64fba5a3802522c70fd61d62f9d9a52ad4706551d21b8b714803d65f99e1",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "9baf6b5be2466d07d9062c3d3e5f50768a9f2472da0d6554cec34650bc9e1353",
     "e89ed464efb0334a8116b69c91951cc6c89919336a18bb8f381d9c784ad94c69",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "4635558fcc51e423e4336654aaade7ad285861ed308f2b4753f0d7f1a7d6ad5a",
     "7cb02f9918770c06a4a937e2e7696457673bcaa8ed57acd3a5c52d48e59c6859",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "3f25574bdd14abc2b0e86471dc31be1281c4fd310e86dbc8744674a8dcd758e7",
     "665ada678ee4c4222ccb6ab314abb27d1c9ce46d762dd33b0af9b56efe2110f9",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "b2076ddb46f0e075f8c1ea86c106f98cf8f1dc20e5bcbd9a21ecb403dbfdf60e",
     "65b73ac515aff9a83d52b90c479e8319dd5d689a622781cf5ada207a92eba375",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "ab2f270fd8d302f2b0b1260ea0eb3e39f3e2bf5edca5727ff70d9a103dac6d47",
     "302aa9e977dde72bfc962b3941be366058cd320085ebd0ba4d069775c784921a",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "ade0b47a4b30c5787ed7dc7b75f019c136c44eacaaa334ed8fb37d536cffae4c",
     "a4493631b3ed17c63dffbbed25043b4daef16092d623339d18c2f492174aee73",
     "cccd43407f0ae3df3245aff8bb4ee2850bd452dc7599986cdb278490dbea92b0"},
    {"nat-crowd",
     "a4f482bcef17be89e9bf1d9e084828ed86a4eed2d2aa8d69bf57fa7629987db1",
     "16dd671c96f34e5d38be78d5912ed1af03b76a81d5e64786a01813e4518396cf",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "84723e3f2aada5ba51abb059e415e084f43dcb93a998ba6bb1a46248a1c2c355",
     "cddee88f7705596ca0e0e704b1ac18dfeb1530249627c6275cdc4907e900fdf1",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "510eacc5bd0f7eed6db5af2fbefe011133161b8acf993b533a478ed85d24bd8a",
     "492284eb06745dfecf941f1a459c301f02729706846e92b0e25d1f3ca35d7630",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "f9af6f2a6105db4ab45b3d669302d991f6555751273441fcd693803bcb48c184",
     "cf267d42316b69cf96323c5d8f014e7abe86addbd54e4eab1e2bd342f239430a",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "4eadf72864bfd3393c2247552efbc543a3d3fe63fa4d182aace7045dfef8de81",
     "46e3a316f422c35effb4267a7114c5e0f8c9637216cf4c63c86f20ec7f76fac1",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "645d8fa27177792cdb73d013f768be1a6bbd8720330ba0ba130c57a4bee35b19",
     "98cf0ba7fd1510d8f4490b330800f88707cd2828831d65de8b5b5cc55649f7e5",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "26bf98b1a83ca63c465dc01747bdd07de85e9586175eabef0c5c5ed216ee9317",
     "ca3da4fb509cffee108f0cf16f9fdf776c7d5b9eae1bfe669ad11c26981ee178",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "e49015118b238961ee9e3ce091d9c322b3fb23496c35cde7c0891097584875d5",
     "e516732053046c9b330f88e31f5e2dabf61c6e090183045776ba949d8a9d9982",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "bbf7f0bff70e90511784189f4f002d4efd76cd7b041a8926f50991751b228123",
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
