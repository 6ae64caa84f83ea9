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
     "ba5d1cb4b10ac7df5d08990b237c76053cab2fab5250bcc391aa2804398b2845",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "8295b2559704e9ed3aa125002b448a48657cfac6119a3ca49aaee8f0dfc709db",
     "4721e7a76a5c50b11bc50621119470184bc174bb10f3f4418711be6ac402ce30",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "defc1daa4b63408fc8547fe7640ca7cd256d736878675eb8e30ae1416d15618a",
     "3f1bdd56d8af7618cd46ad04df1975bc9447e9eae01f8d82c0bab937bdd99511",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "4af7249eed884fee0c8aa3344f4a5d402ba0ea15e2c4ee89d30afc067162db23",
     "222dac5d03e9615fd616735565d5e9faaa0a27d3a726649c7f755451802b2b31",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "8debfa98973572199e272dcd10396cbd2671a3df42711e9921fba3a1a0b0882a",
     "59ccaec4a52649df27b41d707400fec4c36489022295aac4f630135df32adb7c",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "e9baf43ec0363971704c5111c328c3da8445bb67435b677c15ce8c6a7d2de2b4",
     "086f838a8b97927d0d6d7c47ba8c83d14156966b793cca6fa308a973c8d87ef9",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "e6c224d5914d0625cd3ca13c1040a1ebf86a65647f708ffd674b28d9b48c7db3",
     "f2850628a54dcd9c53dca36629c226c27040b6ca0d2d9188e4af35aaf3a64649",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "0b2cef985fa25156b9fdf9c3d3f0f7efa835cdaaf6876595d41e0fdb8e9fe73c",
     "c9990a93e64032f4c9288debacb8a7036f3ea31c0185c9ea57f793d447e1e7d9",
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
     "b590e1f2c70a03a9a0382f1f64a85ebd65f1ff7a92a0d4e5babd677a52fd662d",
     "abaaa322261ce5664128725d4733d0cef662e2d9dafec576c15046d1e65518e0",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "de2d8a8177ea3152d826a85a88284476dd6f6ff423d2aafd13f2b7af98f617c2",
     "1e4434390fd59ec18317ce0cf6526d90c5b31f2f0be1a990716fb6e452280902",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "a7a65549df1747fbb34055dd3c203207b8c803daee205a645e6878b5f7054ab7",
     "7a8777ded1a38ecf5c2f2c00197974e2a8f7f4fb112ac365bdc117bd47b0a75b",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "908aaf996c3abeafe2fffae4cae1bde0202387737d724619d8a7442cda757059",
     "442a4490d69cdef18453a50830892dea08d8c593b5e048cc3a26bbdc64247e27",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "fa4ec913b797e6245b6c5dfc28d7e2b3b9abeffaad7c881ade54c9db107966d3",
     "98f2fcecf7ce6442bc28027f5371f4689816da3818320be23177f2103b186e13",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "8c56e62418bd1303ff8b7a86d5a27ed667723f01df633a60783b61507bd15721",
     "d6e4c2489b16b9c3ac4fde82115e15170fd5b1385b609bb1331b46edd7c1c0ef",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "fe6e0fac1c238735a01dfcacdb847a439286a23d862a47b8979d90a6de766f73",
     "65e89579eeb9501dcfafb2f33a17df2bf64e52dc68bb8bbe1c95c8fe589374f6",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "0271a12a5b33cb3672ac65f51fa2fea34a7f1604f9488e25747b97066573dc51",
     "64a29a73d6ad5d8ed5cbeaf2e84590b1e839fcec8f780e22c8a60093442c322b",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "a693190cf40109e8e435649f2da0685cbb95b8db35312177c49e5919c1376f3b",
     "2e8e84c5c29feea6544e182f0e928921c195a6eef96270b1d9e06fb33e674231",
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
