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
     "b192b097cf1f6530064ee0f8c2db2b970bef2c73377c7ddab86437efd9bcd499",
     "c86361f3883839d0bef19d54730f916974e201981779727cd2deb05019d4688c",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "220a2f91a6d416c9556498ed66eed4ffa9c8bd2020d917e005ca31eb88fd4eef",
     "d21eb2f68ff08126709088005cda20d580e1a5a40511d77103d1fa8611193ddd",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "c66bf6fea180216e880438929710646d0de45040e7e90f21ea0e291bc3cd33f3",
     "46c73fe904d8b8effaa6efaba2fe71574452374fd78c5ae8545b2931e4f4e42e",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "6a368eed40b486f773ec46e337ce9f5dc3d815fe11b9a0162f3bcd8d1e987820",
     "01bd12af676d16eac16da57997370059a704e42540f37651d3b9d07e3ddd4ba5",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "882392b71603379146acd89fccb7519420add651817a30399dd83df1e2a0b5d1",
     "8997a51a112a3eaf600de5ecab8dae5c2472176fb31d2490dd470f5e792a63c3",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "f544fdc39914ecec8a0ba33967150258ecd704973e8f0588668d2abeef3e7d56",
     "be28fcb7cdf113603e7b4731656e69c44e455c9246e3fba28e2bc60ab3ed8bcc",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "b767f9225b9594cc2b31fd6137986be013bae5eff66c74a62c66434d9a3047c3",
     "bda9e3e0e0d7bd42548e3dc5aa905f74dc3b3082794b82597ca466b0ff42a492",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "b3912d3b84626816379d130a503a69dc50f0f9110252d55293f37c0653576ca9",
     "0084c87b7a8e82fb285905cae61bbb0d01634e7f0d5cb8199ea9f7cf56aab547",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "67eeef742f5c7200c820459d4ae238044d06d1e2d3f0a188ba5b9d2d96609bde",
     "c0d74f5ad035f122aab6fee0c9d60842707b8b3fa2f16ad4175b3eb50f969aa3",
     "cccd43407f0ae3df3245aff8bb4ee2850bd452dc7599986cdb278490dbea92b0"},
    {"minting-ipv4-10",
     "ebf1ac1314a68ce56ee926aaae02e0c70f00ccc1bf3a9972dd1b359e1a3bbc90",
     "820b9bcf1d014f985f58031234b1a209328aa89000a08bea9d7769c22f59ada1",
     "4518b0ac8fc8c9cada81d877105a69e850fcc15311a9823632abaee4070a77cb"},
    {"minting-ipv6-16",
     "243bc77d6beb2c3c8369287907052b272681a45606d19fa7725eaa30fc0c0137",
     "ebb0378764f7ade2b2f1f2be7742460c881c905b70adf41c2601798f04612aea",
     "d1930d9cfc27a334b08c1d39dabed53a2cf4780a5ecb9cd18d707d32678088c2"},
    {"minting-ipv6-24",
     "74110d32e613eaf057153d41975e04619341eb930ec6901c390643de3d98330c",
     "951e375c0dcd8615491987b5da2f17db5db63773f4f542d314a169c803c6bd43",
     "f5fbc65b230df77a4f2b72d7039b2c819d10044666a137d7e6f965bdafa1b235"},
    {"nat-crowd",
     "d4a04339d2fe266eb08bbff794a06f6981c1961c66745e82451a4b2b45d28c03",
     "1c9f2e855fe904ad1ff4a6ccef4aa0474185986eef3deb2eb95ab308ac2500c9",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "ececc79e9fbb4dac88d07a1487614b6a3428706fdf10cc74c95cdb64bc09a5cf",
     "2737ef0be5f7ad34507accbd843a7435a988257bd8a807ace64570713f8b20d7",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "a8e7c11cfde8fde15d9f333a1d989634bfd54e815b26a53505ebdaa8ea264057",
     "8c342ea59ad11c300bd11920dd2c22a82ecfbb8853842a3eb83ef2fb579ded1e",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "4577a9bf20a36b4a54701166f7e5c64a5d789b19a452c64751e881183e3807e3",
     "d8fd22f1f67451174c909e4b7d83656861b7007b1b21dd7b2977e264415b79a8",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "af2983722568fe09466c45603c56818f750d5203717b7d2a519c24f8d3ed8d12",
     "e317e9241d072adf26c8100586139ccec0cddc36d8b52a95569a35e9cf3d3ec7",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "d8f1891f913c594c16d706f650f7da9aa119c635684f1ac3fbceb487878cf5c6",
     "ce9266476789a076b63ee524aaf175932045020c52d750c1b9c440a958cc018e",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "9269f34b6e9ec296a108c5990fd84a69d64cda3e73cc5b7c10658b0a474e66d6",
     "633dab4aa25bc7d6343d55c4da61b11d4be3cfc16e6e2b63318b6732d3fd1ed3",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "0271a12a5b33cb3672ac65f51fa2fea34a7f1604f9488e25747b97066573dc51",
     "fac48649843fcfbcb3e758fb5d8884ce4149e4a15840f730823408a282f86446",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "ea9cb0afadc7000f54051935bb05d6dee77dd7debc79c18d4887e4e8b4e97fc8",
     "15a01544df9a439cb6859ed69662033abbe5c52143ca1d7c4a92271bde220f00",
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
