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
     "624f8dbcda3bf1eff3f6e1090e648d94d2f6adbc3cf2871cbb584bba310679dd",
     "4efd946e34437e6180db77f9a2b75c0a76ffb9accd511e5678c43d9024aab744",
     "e2c6a2d1c86753d184ecc0c166c56542026eef496060356041c289d4a7fbe267"},
    {"cgnat-crowd",
     "070b04a4560440af9924e729e56f191e11a22ebcfa5a8cf043e403270b3fe711",
     "ffba097b5a05d9069db61c676100ac24ff948f24b72fb9ab3541b1439995c507",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "739e6bac2aeb4360ec295fce1785a71d83bcb40c544183dd5d74aae9637f6afe",
     "87408adda2df0fef83fec65c842792f08e1b36eacc3285c6af5925dfd67a7645",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "9baf6b5be2466d07d9062c3d3e5f50768a9f2472da0d6554cec34650bc9e1353",
     "96cd18c5be10aa03a1bbfec034d90f53c816431349352ea87df872870292374b",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "f2c6c249bf5ae9a2042cdd9a585c83638ef5b7df0f057a2c631006165abdfbc3",
     "f303e86875dfa7f8caea0c485bb9e38cb991c8b0fd8bc31374148071344684be",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "12971eb60ac34dff74ce50adca49050ffa9ade4a0fb7843474164c40d58c777b",
     "6d517e5e1322bdcc360097614b597c4b62ae910a709b3af6bb640523df018aa4",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "7740a1f69f5382a67c6aee84647d206e7e4f1e04c91693351cf59368916fed35",
     "2587539485efe4564a15ed20f81ff70f0c750d039794b35daa8614588f3d2cd0",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "dc43ab4e9020923cd16b8b149f7f8ae7668b220a46cbbec6f6c377b20d01f925",
     "081259dfc5ebe2ed6f84566754b2bfc455ee4397d890762fcc13eb82d30b31f6",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"login-failures",
     "4d31d6a588478ccaa04161abe84943b0dfa2e46476f5ad6e9b3a9c349493c466",
     "b4b86675cfbf2755581c6209d63fb47a9f11205589ee38881c2f86a3991d402d",
     "cccd43407f0ae3df3245aff8bb4ee2850bd452dc7599986cdb278490dbea92b0"},
    {"nat-crowd",
     "03b702095746f8d2033ed078bee52e47e41a338f3d958827f466d719b02cad31",
     "25b3371f02250be93783d1b9043cf26b51c6adaa4c11343ece4d104b7123b837",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "1825fbf61338b3ecaaecaab2492fc4baf6b21c9004157daefc1dd2c54d471dd4",
     "bd5dafe4a8c1736d2539b4df9b8397fcdd93dce28a97b8ed129d4cffe32969c4",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "510eacc5bd0f7eed6db5af2fbefe011133161b8acf993b533a478ed85d24bd8a",
     "492284eb06745dfecf941f1a459c301f02729706846e92b0e25d1f3ca35d7630",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "da2d92cebd946654627ff36453928afd4aef26e9d8b6ce6cd9e2b5d55c41706c",
     "1c680ea4daefadc63b1d7408311a435562b01d663c4d42ab63e9c061e43748e7",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "75ad54114881f30470eebe275736f8388dca7b8a2806d4e1d9c0372df8adbd6b",
     "524ecd5fdda1a74222aa3109a9be999e0ec8df0d67e14bb1913752ad41da43fc",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "d049c0082b746593e23ebdf38c9af9131244b2e32fe09d16b9f54c8f92e2de26",
     "4c1c356c03cc2aa9dff29d26949f907ac068e2260a9e24b1f1f4676ef6cd458f",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage-local",
     "ae71cc3b7dfcf1e213aead39ea39fde3c958c85a018420242830fbceec50ffbd",
     "1f280b465251c86dc3a223fe20ab4e7033ee1533c395f2152fefefb691ae624f",
     "0e0e7f03110ffdb8e7f73b8809ac893b3fa2323283a18af767f2619abb960f2c"},
    {"store-outage",
     "2b722f9ab019fa1d2c2b618d72aaf4be28dd06e579404c0fcfb44c41394891f9",
     "423563a10400d675d32fb682f874391620d57aec6d3f567ce0e865a00c7f0933",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "100c51d7d4dbeded4a87b1c8688757b1d6f5162c93a27111dadf780d97520e62",
     "959918cea698a8c98885e3a9b7ef0904796346670cd67c39c96717d0f412e3c2",
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
