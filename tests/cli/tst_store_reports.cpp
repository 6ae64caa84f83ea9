// Every shipped scenario reports the same on the memory store and on Redis (a redis-server the
// suite starts on a unix socket): `ratelab-cli run --json` and `--csv` compared field by field
// and sample by sample, the store's own bytes and the wall-clock timing aside. Keyspace figures
// are counted at each sample's end on the virtual clock in both stores (Store::keyspaceAt), so an
// expectation on them holds alike.
//
// sameReports takes the scenarios of at most a million requests; sameReportsHeavy the larger
// one (address-minting, 10^7 requests), a ctest entry of its own (tst_store_reports_heavy).

#include <QtTest>

#include <QDir>
#include <QTemporaryDir>

#include "fixtures/cli_sim_fixture.h"
#include "fixtures/redis_fixture.h"

namespace {

using namespace ratelab::testing;
using Json = nlohmann::ordered_json;

// Scenarios whose reports differ between the stores by design, with the reason.
struct Apart {
    const char* scenario;
    const char* why;
};
constexpr Apart kApart[] = {
    // "shared_store": false gives each replica a memory store of its own; a Redis URL names one
    // store, which every replica of the run reaches.
    {"replicas-local", "each replica's own memory store; a Redis URL is one store for all"},
    // A memory store of 100,000 buckets filled by minted keys: its cap and the fair-share rule
    // decide there, and Redis has neither (docs/RELIABILITY.md records both stores' figures).
    {"minting-ipv4-10", "the memory store's bucket cap and fair-share rule"},
    {"minting-ipv6-16", "the memory store's bucket cap and fair-share rule"},
    {"minting-ipv6-24", "the memory store's bucket cap and fair-share rule"},
};

// Scenarios of ten million requests: minutes on Redis.
constexpr const char* kHeavy[] = {"address-minting"};

bool listed(const QString& name, auto&& names) {
    for (const auto& n : names)
        if (name == QString::fromUtf8(n)) return true;
    return false;
}

// Path -> value of every leaf of a report, "keyspace.max_buckets", "actors[0].allowed".
void flatten(const Json& j, const std::string& path, std::map<std::string, std::string>* out) {
    if (j.is_object()) {
        for (const auto& [key, value] : j.items())
            flatten(value, path.empty() ? key : path + "." + key, out);
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            flatten(j[i], path + "[" + std::to_string(i) + "]", out);
    } else {
        (*out)[path] = j.dump();
    }
}

// What stays apart: the store's own measure of its memory, and the run's wall time.
bool storeOwn(const std::string& field) {
    return field.find("bytes") != std::string::npos || field.rfind("timing.", 0) == 0;
}

// The CSV's rows as lists of cells, the bytes column removed.
QList<QStringList> csvWithoutBytes(const QString& path) {
    QList<QStringList> rows;
    int bytes = -1;
    for (const QString& line : QString::fromUtf8(readFile(path)).split('\n', Qt::SkipEmptyParts)) {
        QStringList cells = line.split(',');
        if (rows.isEmpty()) bytes = static_cast<int>(cells.indexOf("keyspace.bytes"));
        if (bytes >= 0 && bytes < cells.size()) cells.removeAt(bytes);
        rows.push_back(cells);
    }
    return rows;
}

}  // namespace

class TestStoreReports : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void sameReports_data() { scenarios(false); }
    void sameReports() { compare(); }
    void sameReportsHeavy_data() { scenarios(true); }
    void sameReportsHeavy() { compare(); }

private:
    void scenarios(bool heavy);
    void compare();

    RedisServer redis_;
    QTemporaryDir dir_;
};

void TestStoreReports::initTestCase() {
    QVERIFY(QFile::exists(cliPath()));
    QVERIFY(dir_.isValid());
    std::string error;
    QVERIFY2(redis_.start(&error), error.c_str());
}

void TestStoreReports::scenarios(bool heavy) {
    QTest::addColumn<QString>("name");
    const QDir shipped(QStringLiteral(RATELAB_SOURCE_DIR "/scenarios"));
    const QStringList files = shipped.entryList({"*.json"}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 20);
    for (const QString& file : files) {
        const QString name = file.chopped(5);
        if (listed(name, kHeavy) != heavy) continue;
        if (std::any_of(std::begin(kApart), std::end(kApart),
                        [&](const Apart& a) { return name == QString::fromUtf8(a.scenario); }))
            continue;
        QTest::newRow(qPrintable(name)) << name;
    }
}

void TestStoreReports::compare() {
    QFETCH(QString, name);
    const QString scenario = shippedScenarioPath(qPrintable(name));
    const QString url = QString::fromStdString(redis_.url());
    struct Run {
        QString store;
        QString json;
        QString csv;
    };
    const Run runs[] = {
        {"memory", dir_.filePath(name + ".memory.json"), dir_.filePath(name + ".memory.csv")},
        {url, dir_.filePath(name + ".redis.json"), dir_.filePath(name + ".redis.csv")}};
    // Each run has a namespace of its own; the previous rows' keys would only slow the walks.
    QCOMPARE(redis_.commandText({"FLUSHALL"}), std::string("OK"));
    int exitCodes[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
        const CliRun run = runCli({"run", "--quiet", "--store", runs[i].store, "--json",
                                   runs[i].json, "--csv", runs[i].csv, scenario},
                                  {}, 1'800'000);
        QVERIFY2(run.exitCode == 0 || run.exitCode == 1, qPrintable(run.err));
        exitCodes[i] = run.exitCode;
    }
    QCOMPARE(exitCodes[1], exitCodes[0]);  // the expectations hold alike

    std::map<std::string, std::string> memory, redis;
    flatten(readJson(runs[0].json), "", &memory);
    flatten(readJson(runs[1].json), "", &redis);
    QVERIFY(memory.count("keyspace.max_buckets") == 1);
    QStringList differ;
    for (const auto& [field, value] : memory) {
        if (storeOwn(field)) continue;
        const auto other = redis.find(field);
        const std::string there = other == redis.end() ? "(none)" : other->second;
        if (there != value)
            differ << QString::fromStdString(field + ": memory " + value + ", redis " + there);
    }
    for (const auto& [field, value] : redis)
        if (!storeOwn(field) && !memory.count(field))
            differ << QString::fromStdString(field + ": redis only, " + value);
    QVERIFY2(differ.isEmpty(), qPrintable(differ.join("\n")));

    const QList<QStringList> memorySeries = csvWithoutBytes(runs[0].csv);
    const QList<QStringList> redisSeries = csvWithoutBytes(runs[1].csv);
    QVERIFY(memorySeries.size() > 1);
    QCOMPARE(redisSeries.size(), memorySeries.size());
    for (qsizetype row = 0; row < memorySeries.size(); ++row)
        QVERIFY2(redisSeries[row] == memorySeries[row],
                 qPrintable(QString("sample %1:\nmemory %2\nredis  %3")
                                .arg(row)
                                .arg(memorySeries[row].join(','), redisSeries[row].join(','))));
}

QTEST_GUILESS_MAIN(TestStoreReports)
#include "tst_store_reports.moc"
