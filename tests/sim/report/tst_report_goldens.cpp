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

#include "fixtures/sim_fixture.h"
#include "identity/sha256.h"
#include "sim/report/report.h"
#include "sim/run/scenario_runner.h"

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
     "ebe8989f7036c0297547e5f906bacdc8f83a329adcd673bb57b924ede0b971c9",
     "bb482e5fe6759ee8ca237cca4a0d5e85561afb1a0d500f8c2095999cfe4230d2",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "75d49da330c204de8f9730c92036323d74e8e5749649c1758c4bfb1819afb58e",
     "94a67aa802f8bf45061f35d65b5d1367d875c04ea61a72cd3fb944980e9eb041",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "5279f7274c449f0bd6bd3d21138820fa12eeb3787c941db6bc23dcbad5020f9a",
     "920442063dd7d07c7201460ebda195f4b9a4ffeb972bb6a0d2df432f7c13e546",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "32275d0d99505e4811c2874deff058986b8573b3c3d76218deff3888fc6bda57",
     "fff06b456bf577c67168c5b2498137769d2131534b0beaf2526b9899943967bb",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "a99fd121dc53255c8939e95ca7330537578b3d6df55ff57c729bad43392e91d1",
     "311912e9e88290439a68d259909ccbee861dc599ee0854f50675edc6f95889d8",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "64f44f843f5fb970e4b780aa78db1fd9699b94ca02b9c0bc9896c2e508592117",
     "48956a25f8a0328b66a27ec62adddddc66bac56d1bc2978f638ad3d103792133",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "02bac356a3445af2c0a082e9f23644c6b200ab3851f23e7fd22f05a0c5b18c9d",
     "3adb9aa42060079ccaaf52faea91ca783723c178603d395f91c56c262816a075",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "c6df0b513201c664d56a50185f1e248cc62d7535905266a82464c177517d26ab",
     "1db82c7af2a5245590870b39778ee294baf1f03155f24d8ba9fcd3abf6f7a168",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "5888da940a8eccb02dace0fe5c31db7e29d742e3c52f77136fc0c6308f6a8c20",
     "09a123b9db6e577c6352465b4fbb30acfdb3060ad4badcc3c4ab575252f891cb",
     "cccd43407f0ae3df3245aff8bb4ee2850bd452dc7599986cdb278490dbea92b0"},
    {"minting-ipv4-10",
     "1cd6e46c496569d37d1cf587d3175a9aa6944f7441bae016779c3cac3e2f45f3",
     "1eec296a07fbb7a8056b282986c18986d588911c1f94407421a760da9b67ba81",
     "4518b0ac8fc8c9cada81d877105a69e850fcc15311a9823632abaee4070a77cb"},
    {"minting-ipv6-16",
     "d4c27bdfad33ddf34c17af1e84daa373ccaa35fb42893d867cc3086868a4da91",
     "ae8bed1034981c7e854c816508c8d90861df54e096094d6128f6e476ee9859f0",
     "d1930d9cfc27a334b08c1d39dabed53a2cf4780a5ecb9cd18d707d32678088c2"},
    {"minting-ipv6-24",
     "1eb559ff09d7011b901b4ad66487a55c040ebcf1c93a4be6a850155b79e56e47",
     "0ca0b80eae06cdb5b779972fa81b826e9082d2ebcce7ac13af657cca49d29011",
     "f5fbc65b230df77a4f2b72d7039b2c819d10044666a137d7e6f965bdafa1b235"},
    {"nat-crowd",
     "1f70f15f731adc3acc3fe29aec3a4d9b80f850263fa14ffaa3bc28b47783edab",
     "f8b970380f311ce044854922c5ed76bf6a44c1d98abdbf84b3b2ffe087982193",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "736e3e452deab6bf962397bb5d42cc2dcb45f4c94a35376544edf6a56499b776",
     "516fc1240aa227d074db23097d88348031a651df4d0ebb9f45f9064340301228",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "a7a65549df1747fbb34055dd3c203207b8c803daee205a645e6878b5f7054ab7",
     "7a8777ded1a38ecf5c2f2c00197974e2a8f7f4fb112ac365bdc117bd47b0a75b",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "73f0e439d1da98104536f08f5275e7f545037fcf3406386729d36cab7a68bfe1",
     "dc884c628a891b8174c6426e88bfebd8775f3c3d1410b3d358d203eea3e8a46c",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "90412b4a4b9d61af459ec339b10c70bdcb0955ef266f7f50ac62c8be626d579c",
     "dd41a9942f026398db03af71a74097cda89585c37f944734015d2a86e5df5b67",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "f1c22f5228691a1193912a066d2474e30341d2b6a7ad92c5bf056328e0ef2013",
     "8623e8e88223305c419b78d1c09c95220323e1c2dfc1d4fbed574a060dcef074",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "3b75284058bd36703b28ec35b847f12e0369ef0fa96a4c2f8d4a99fb08cb9267",
     "0268b11a194ae3bdcf23c21c5ed275a995caef9c6bf8c79618ddbca8aa99b83a",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "19bd6f4ac9e2c3f014f6a6a842bde5546aeaa577ae9d6d74f83ae31925452887",
     "90fdb5e7dc7448f487d5d4068236ed73023ceaa7ad30b241ff917f0c848f2ecf",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "264f7880553ea55a9c6e752662f47b9b4be1bf32f8ed6572908d888d9242e0e8",
     "27f46374c23ddb484c6ebea770cb2bbba2e2b9d9b056e8082269b880dfb30af7",
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
    const Scenario s = shippedScenario(name);
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
