// key.when_missing through the limiter: what a header, principal or composite key does with a
// request whose header, principal or attribute is absent or empty: refuse (412), skip (the
// policy does not apply), peer (the client address's key), shared (one bucket for all of them).
// Each row sends two such requests from two addresses under a quota of one, so the second
// answer tells whether they shared a bucket.

#include <QtTest>

#include "fixtures/limiter_fixture.h"
#include "ratelab/bucket_key.h"
#include "ratelab/policy_file.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

constexpr Nanos kSecond = kNanosPerSecond;

// One request a second for a minute: a second request within the second is refused.
Policy quotaOfOne(KeySource source, WhenMissing whenMissing) {
    Policy p = tokenBucketPolicy("api", 1, 1.0 / 60);
    p.key.source = source;
    p.key.whenMissing = whenMissing;
    p.budget.enabled = false;
    if (source == KeySource::Header) p.key.header = "X-Api-Key";
    return p;
}

enum class Part { Present, Absent, Empty };

void fill(TestRequest& r, const Policy& p, Part part, const char* address) {
    if (address[0] != '\0') r.from(address);
    const std::string value = part == Part::Present ? "k-123" : "";
    switch (p.key.source) {
        case KeySource::Header:
            if (part != Part::Absent) r.header("X-Api-Key", value);
            break;
        case KeySource::Principal:
            r.principal = value;
            break;
        case KeySource::Composite:
            for (const KeyPart& k : p.key.parts) {
                if (k.kind == KeyPart::Kind::Attribute && part != Part::Absent)
                    r.attributes.emplace_back(k.name, value);
                if (k.kind == KeyPart::Kind::Header && part != Part::Absent)
                    r.header(k.name, value);
            }
            break;
        default:
            break;
    }
}

}  // namespace

class TestKeyWhenMissing : public QObject {
    Q_OBJECT

private slots:
    void whenMissing_data() {
        QTest::addColumn<int>("source");
        QTest::addColumn<QString>("parts");  // composite parts, comma-separated
        QTest::addColumn<int>("whenMissing");
        QTest::addColumn<int>("part");
        QTest::addColumn<QString>("address");   // "" for no client address
        QTest::addColumn<int>("firstStatus");   // the first request
        QTest::addColumn<int>("firstResults");  // policies in its Check
        QTest::addColumn<QString>("firstKey");  // the key it charged ("" for none)
        QTest::addColumn<int>("secondStatus");  // the same request from another address
        const int header = int(KeySource::Header);
        const int principal = int(KeySource::Principal);
        const int composite = int(KeySource::Composite);
        const int refuse = int(WhenMissing::Refuse);
        const int skip = int(WhenMissing::Skip);
        const int peer = int(WhenMissing::Peer);
        const int shared = int(WhenMissing::Shared);
        const int present = int(Part::Present);
        const int absent = int(Part::Absent);
        const int empty = int(Part::Empty);
        const QString a = "198.51.100.7";
        const QString missing = QString::fromUtf8(kMissingPartKey.data(), kMissingPartKey.size());
        // header
        QTest::newRow("header refuse absent")
            << header << "" << refuse << absent << a << 412 << 1 << "" << 412;
        QTest::newRow("header refuse empty")
            << header << "" << refuse << empty << a << 412 << 1 << "" << 412;
        QTest::newRow("header skip absent")
            << header << "" << skip << absent << a << 200 << 0 << "" << 200;
        QTest::newRow("header skip empty")
            << header << "" << skip << empty << a << 200 << 0 << "" << 200;
        QTest::newRow("header skip present: counted")
            << header << "" << skip << present << a << 200 << 1 << "hdr:" << 429;
        QTest::newRow("header peer absent")
            << header << "" << peer << absent << a << 200 << 1 << "ip:198.51.100.7" << 200;
        QTest::newRow("header peer absent, no address")
            << header << "" << peer << absent << "" << 412 << 1 << "" << 412;
        QTest::newRow("header shared absent")
            << header << "" << shared << absent << a << 200 << 1 << missing << 429;
        QTest::newRow("header shared empty")
            << header << "" << shared << empty << a << 200 << 1 << missing << 429;
        QTest::newRow("header shared absent, no address")
            << header << "" << shared << absent << "" << 200 << 1 << missing << 429;
        // principal
        QTest::newRow("principal refuse")
            << principal << "" << refuse << absent << a << 412 << 1 << "" << 412;
        QTest::newRow("principal skip")
            << principal << "" << skip << absent << a << 200 << 0 << "" << 200;
        QTest::newRow("principal peer")
            << principal << "" << peer << absent << a << 200 << 1 << "ip:198.51.100.7" << 200;
        QTest::newRow("principal shared")
            << principal << "" << shared << absent << a << 200 << 1 << missing << 429;
        QTest::newRow("principal shared present: its own key")
            << principal << "" << shared << present << a << 200 << 1 << "princ:" << 429;
        // composite
        QTest::newRow("composite attribute refuse")
            << composite << "route,attribute:account" << refuse << absent << a << 412 << 1 << ""
            << 412;
        QTest::newRow("composite attribute skip") << composite << "route,attribute:account" << skip
                                                  << absent << a << 200 << 0 << "" << 200;
        QTest::newRow("composite header peer")
            << composite << "header:X-Api-Key,method" << peer << absent << a << 200 << 1
            << "ip:198.51.100.7" << 200;
        QTest::newRow("composite header shared") << composite << "route,header:X-Api-Key" << shared
                                                 << empty << a << 200 << 1 << missing << 429;
        QTest::newRow("composite present") << composite << "route,attribute:account" << shared
                                           << present << a << 200 << 1 << "comp:/:" << 429;
        // A composite's address part is no header, principal or attribute: still refused.
        QTest::newRow("composite without its address")
            << composite << "peer,attribute:account" << shared << present << "" << 412 << 1 << ""
            << 412;
    }

    void whenMissing() {
        QFETCH(int, source);
        QFETCH(QString, parts);
        QFETCH(int, whenMissing);
        QFETCH(int, part);
        QFETCH(QString, address);
        QFETCH(int, firstStatus);
        QFETCH(int, firstResults);
        QFETCH(QString, firstKey);
        QFETCH(int, secondStatus);
        Policy p = quotaOfOne(KeySource(source), WhenMissing(whenMissing));
        for (const QString& text : parts.split(',', Qt::SkipEmptyParts)) {
            KeyPart k;
            const QString kind = text.section(':', 0, 0);
            k.name = text.section(':', 1).toStdString();
            k.kind = kind == "route"    ? KeyPart::Kind::Route
                     : kind == "method" ? KeyPart::Kind::Method
                     : kind == "peer"   ? KeyPart::Kind::Peer
                     : kind == "header" ? KeyPart::Kind::Header
                                        : KeyPart::Kind::Attribute;
            p.key.parts.push_back(k);
        }
        Limiter limiter(policySet({p}), makeMemoryStore({}));

        TestRequest first;
        fill(first, p, Part(part), address.toUtf8().constData());
        Verdict v = limiter.decide(first.view(), 10 * kSecond, true);
        QCOMPARE(v.status, firstStatus);
        QCOMPARE(int(v.check.policies().size()), firstResults);
        if (firstResults == 1 && !firstKey.isEmpty()) {
            const QString key = QString::fromStdString(v.check.policies()[0].key);
            QVERIFY2(key.startsWith(firstKey), qPrintable(key));
        }
        if (firstStatus == 412) QCOMPARE(v.code, RefusalCode::IdentityUnavailable);

        TestRequest second;
        fill(second, p, Part(part), address.isEmpty() ? "" : "203.0.113.9");
        limiter.decide(second.view(), 10 * kSecond + 1, v);
        QCOMPARE(v.status, secondStatus);
    }

    // The field in files: read, written only when not the default, read back equal; refused on
    // sources that always have a key or refuse, at the field's line and column.
    void policyFile() {
        const std::string text =
            "{\"version\": 1, \"policies\": [{\"name\": \"p\", \"key\": {\"source\": \"header\", "
            "\"header\": \"X-Api-Key\", \"when_missing\": \"skip\"}}]}";
        PolicyLoadResult r = parsePolicyText(text, "a.json");
        QVERIFY2(r.ok(), formatDiagnostics(r.diagnostics).c_str());
        QCOMPARE(r.policies->policies[0].key.whenMissing, WhenMissing::Skip);
        const std::string saved = savePolicyText(*r.policies);
        QVERIFY(saved.find("\"when_missing\": \"skip\"") != std::string::npos);
        PolicyLoadResult back = parsePolicyText(saved, "b.json");
        QVERIFY(back.ok());
        QVERIFY(*back.policies == *r.policies);
        r.policies->policies[0].key.whenMissing = WhenMissing::Refuse;
        QVERIFY(savePolicyText(*r.policies).find("when_missing") == std::string::npos);

        r = parsePolicyText(
            "{\"version\": 1, \"policies\": [{\"name\": \"p\",\n"
            "  \"key\": {\"source\": \"peer\", \"when_missing\": \"shared\"}}]}",
            "c.json");
        QVERIFY(!r.ok());
        QCOMPARE(
            QString::fromStdString(formatDiagnostics(r.diagnostics)).trimmed(),
            QString(
                "c.json:2:45: error: when_missing is only used with source \"header\", "
                "\"principal\" or \"composite\" (source \"peer\" always has a key or "
                "refuses); remove it or set it to \"refuse\" (at /policies/0/key/when_missing)"));
        r = parsePolicyText(
            "{\"version\": 1, \"policies\": [{\"name\": \"p\", \"key\": "
            "{\"source\": \"principal\", \"when_missing\": \"later\"}}]}",
            "d.json");
        QVERIFY(!r.ok());
        QVERIFY2(formatDiagnostics(r.diagnostics).find("\"refuse\", \"skip\", \"peer\"") !=
                     std::string::npos,
                 formatDiagnostics(r.diagnostics).c_str());
    }
};

QTEST_APPLESS_MAIN(TestKeyWhenMissing)
#include "tst_key_when_missing.moc"
