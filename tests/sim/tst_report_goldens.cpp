// Golden hashes of every shipped scenario's run under its own policy: the report JSON without
// its `timing` object, the per-sample CSV series, and the stream of decisions (one line per
// request). They were taken from the simulator before its hot path was batched and pipelined,
// so a faster runner that decides anything differently fails here.
//
// The goldens pin today's report format too. When a change to the report, the series, the
// decision records or a decision is intended, regenerate them and say so in the commit:
//     RATELAB_PRINT_GOLDENS=1 build/tests/sim/tst_report_goldens
// prints the table below with the new hashes (it still fails, so a stale table cannot pass by
// accident). tst_batch_equivalence compares the batched runner with the one-by-one runner
// directly, so that guarantee does not rest on these hashes alone.

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
    {"cgnat-crowd",
     "50729b8c8b34086bcb943c506f8d8d32975644a2232427e62cb1cf75ac1e83df",
     "9d43f3693a6b4127e94a004973909d5d138d00a6a89e06f401e250d990bd4184",
     "9e281843015bd4bbbe983d66f7e69670e8d0551261345eb26581bb19508e2f55"},
    {"credential-stuffing",
     "cfcda9a553b66e318345f914129833eda38cd67a1661d04e3482d08b00201a42",
     "c36899b01036368777f3e0640179f248bca2806d30622b4f30a0d296320526b2",
     "746469d2def77ff9e378f20a05812f7f227e145e5616c32f69c248e497b8e36c"},
    {"fixed-window-boundary",
     "7ff4815d51a7c69432a1171e860033ac47b108ce838da481b0dc9ef62ff6a748",
     "c6c4633156e82f5481a8318611d18d303ccc3bf8a0977beeecaa5ae6ceaa1233",
     "5065539f329025dbffe533ea085131e5e1bf7b4f259374a94f09981afc5413d0"},
    {"forwarded-spoof",
     "7cca3668d91d15e26278d3536f7a8855817466b8a45ebb00e7c9c48401d924b1",
     "0fe2c15efe43ebb26f271727b4828567da36e924c0463046f5727f99e02c399c",
     "40ebc4dc0afa0890b7a94202ea26ae2af618e494b7a6792311f9b514fe6dfff7"},
    {"header-rotation",
     "40c6cb6845663bd3e91059e4431c3136b177857dffb91e9cf17c515435839f79",
     "2bdc7ae087bdbb11f8464e5e30895feca6ece38ac74636018a35b74a033b4bbb",
     "03a8bc9892c8e2608163ccf16d2054f36caf5dbdeb6c7977bfe74586fe82e905"},
    {"ipv6-prefix-rotation",
     "82066fe1ff5c9fe403c88a53d85f70baacd585a9451e21828dc9f5fa7bee6bf1",
     "eaae4ece9693ab5775d6e1a9133cc711f0d3e7f037ce0ee0eeacb6127e09b537",
     "a205422fe87d8376306c6ad5144d8e84be198d423916c565f505ed6e3ad25abf"},
    {"ipv6-rotation",
     "5e9f0f2b0443b6b19db5ec082c53c04f1b12ae16ca4d474ca5a6b913cb49ebbf",
     "ddbfb30526642b4e3b94134f69c169c1e4fe88ec65ac89e8f0d40260bf29c036",
     "dc428803ca65e62f13e589c27161a32a17fe6fc7d48f997b3556b337ff6984b4"},
    {"nat-crowd",
     "79a830a0bb149104fb7d3400325fb02d9575f1eea533f7b2e3259ee8f37017b4",
     "d2f43c27108c7c1f7ab9f3ff69b7cb4932addd48e87e1ffeb9e7e06ebe55726b",
     "ee74c10547ad136743906bbcf293642dda26374009c4f0dd0790749a2ab19760"},
    {"page-load",
     "cad02497c5b307c97a2e53477437e30eb79eefffb4433f46bf6b04e9a99a5b4e",
     "c61d536432be3d493ffba9ffaa65586bb5e2f5b5b2d2f3d751960ab33aff9678",
     "6e36b5ca902d33e513fbddadaaaac775873b163651956602907fb4b61923f7bb"},
    {"plan-tiers",
     "43223b376daca90436eb406b63e999a2fd98eee4fd35414021aeb887af87a7a5",
     "301aa883d82785861582fef3769b19b5b61e7ca0cf16ba1e72a4ce8bf47b0d32",
     "b76b9fb36868a670a71930db15d198757e2a98f29b8b34dd33270be908e3c0c8"},
    {"replicas-local",
     "fcc24bda447fd75d394042fbaad52fe749529a2b27a24293bd301d55b0023e4e",
     "fd823f9ea4154046df0157d1aeb50ad94a550ba9d7a522d6f324f62c696f2032",
     "522c6f6698be1d3a1535155a2dfa8096f665adad3f74d3a473aab8282b1054d7"},
    {"replicas-shared",
     "b2e0ff1837dd959e9e458f808b61e3de03094d5326cdb0f6230197a8fb24dd50",
     "6157c9977dea744708aa99390cf2c83e5f78f32fe801ffacd2e71885f8cf1e6b",
     "38bfb0d4d1664a5e5940aeeabfdd0a02b6407bbd0b2865b857ff7aca921237f2"},
    {"store-oom",
     "2c92adfdfd43e6e3f2f4365f2791b0b595a7a6475fd0529fc4a2ae483a90319c",
     "b63795ca8ad4687f458ba181551b68d1ec07ad9362ec184bc8b02074618e32ed",
     "b80bd38567d18c8da28512f2573b747bc6418043b0c2a7b56a4433b38bd93ad9"},
    {"store-outage",
     "d50649aaf18150eaa115d10fd9a9f3a3ca09a260a47798a4a00784b63a17b346",
     "7338e31a148d49d0f88409a4f4960eec94c71f54907f53efca0576a5376da2a2",
     "67c3dd8d8b27461f6b72cbbfd80da49c832a70a8d36879d160938770baaba785"},
    {"trusted-proxy",
     "ab8437df9e54006553cd859d1d408e8d344a02e5bcef4a2ce804ffe7875ebeb9",
     "0a6ae78e4166fb8a93e88c355a880d0e4cb214cec39f8b906d7b49da21105397",
     "f4016ec8157c8e33d69140d15f34aeeff5c8e8336ef61ca62c46656bb25f5043"},
};
// clang-format on

// Every decision as one line of text, hashed as a whole at the end.
class DecisionText final : public DecisionSink {
public:
    std::string text;
    void onDecision(const DecisionRecord& d) override {
        char line[160];
        std::snprintf(line, sizeof line,
                      "%" PRId64 " %" PRId64 " %d %d %" PRId64 " %" PRId64 " %d %d ", d.seq, d.at,
                      d.allowed ? 1 : 0, d.status, d.remaining, d.retryAfter, d.actor, d.replica);
        text += line;
        text.append(d.key);
        text += '\n';
    }
};

std::string sha256(const std::string& text) {
    char hex[identity::kSha256HexLength];
    if (!identity::sha256Hex(text, hex)) qFatal("SHA-256 failed");
    return std::string(hex, sizeof hex);
}

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
    if (std::getenv("RATELAB_PRINT_GOLDENS")) {
        for (const QString& name : shippedNames()) {
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
