// nginx checks the nginx exports: `nginx -t` on every one, and a live nginx, started by the test
// on a unix socket, that shows the address map groups clients as the engine does and that the
// exported limits admit what the engine's algorithms admit.

#include <QRegularExpression>
#include <QtTest>
#include <array>
#include <random>

#include "algorithms/leaky_bucket.h"
#include "algorithms/rate.h"
#include "fixtures/nginx_fixture.h"
#include "formats/export/export_targets.h"
#include "fixtures/policy_export_fixture.h"
#include "formats/policy_export.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

using Bytes = std::array<std::uint8_t, 16>;

// nginx's text for an IPv6 address (ngx_inet6_ntop): the first longest run of two or more zero
// fields becomes "::"; IPv4-mapped and IPv4-compatible forms end in a dotted quad.
std::string nginxText(const Bytes& p) {
    auto field = [&p](int i) { return p[2 * i] * 256 + p[2 * i + 1]; };
    int zero = -1, max = 1, run = 0, last = -1;
    for (int i = 0; i < 8; ++i) {
        if (field(i) != 0) {
            if (max < run) {
                zero = last;
                max = run;
            }
            run = 0;
            continue;
        }
        if (run++ == 0) last = i;
    }
    if (max < run) {
        zero = last;
        max = run;
    }
    int fields = 8;
    std::string out;
    if (zero == 0) {
        if ((max == 5 && p[10] == 0xff && p[11] == 0xff) || max == 6 ||
            (max == 7 && p[14] != 0 && p[15] != 1)) {
            fields = 6;
        }
        out += ':';
    }
    for (int i = 0; i < fields; ++i) {
        if (i == zero) {
            out += ':';
            i += max - 1;
            continue;
        }
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "%x", field(i));
        out += buffer;
        if (i < 7) out += ':';
    }
    if (fields == 6) {
        out += std::to_string(p[12]) + "." + std::to_string(p[13]) + "." + std::to_string(p[14]) +
               "." + std::to_string(p[15]);
    }
    return out;
}

bool isMapped(const Bytes& p) {
    for (int i = 0; i < 10; ++i) {
        if (p[i]) return false;
    }
    return p[10] == 0xff && p[11] == 0xff;
}

std::string v4Key(const std::uint8_t* q, int v4) {
    std::uint32_t a = (q[0] << 24) | (q[1] << 16) | (q[2] << 8) | q[3];
    std::uint32_t mask = v4 == 32 ? 0xffffffffu : ~(0xffffffffu >> v4);
    a &= mask;
    std::string out = std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
                      std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
    return v4 == 32 ? out : out + "/" + std::to_string(v4);
}

// The group of `p` as the engine forms it, written as the nginx map writes it.
std::string expectedKey(const Bytes& p, int v4, int v6) {
    if (isMapped(p)) return v4Key(p.data() + 12, v4);
    bool zeroSlash64 = true;
    for (int i = 0; i < 8; ++i)
        zeroSlash64 = zeroSlash64 && p[i] == 0;
    if (zeroSlash64 || v6 == 128) return nginxText(p);
    std::string out;
    for (int i = 0; i < v6 / 16; ++i) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "%x", p[2 * i] * 256 + p[2 * i + 1]);
        out += (i ? ":" : "") + std::string(buffer);
    }
    return out + "::/" + std::to_string(v6);
}

// An nginx map with its regular expressions compiled (PCRE, as in nginx).
struct CompiledMap {
    explicit CompiledMap(std::vector<formats::NginxMapEntry> map) : entries(std::move(map)) {
        for (const formats::NginxMapEntry& e : entries) {
            patterns.emplace_back(QString::fromStdString(e.pattern));
        }
    }
    std::vector<formats::NginxMapEntry> entries;
    std::vector<QRegularExpression> patterns;
};

// What nginx's map does with `text`: the first matching regex's value, captures substituted.
std::string applyMap(const CompiledMap& map, const std::string& text) {
    for (std::size_t k = 0; k < map.entries.size(); ++k) {
        const formats::NginxMapEntry& e = map.entries[k];
        QRegularExpressionMatch m = map.patterns[k].match(QString::fromStdString(text));
        if (!m.hasMatch()) continue;
        std::string out;
        for (std::size_t i = 0; i < e.value.size(); ++i) {
            if (e.value.compare(i, 12, "$remote_addr") == 0) {
                out += text;
                i += 11;
            } else if (e.value[i] == '$' && i + 1 < e.value.size() &&
                       std::isdigit(e.value[i + 1])) {
                out += m.captured(e.value[i + 1] - '0').toStdString();
                ++i;
            } else {
                out += e.value[i];
            }
        }
        return out;
    }
    return text;  // default $remote_addr
}

// Addresses that exercise every way nginx compresses zeros, plus random ones.
std::vector<Bytes> sampleAddresses(std::size_t randomCount) {
    std::vector<Bytes> out;
    std::mt19937_64 rng(64);
    for (int mask = 0; mask < 256; ++mask) {  // every pattern of zero and non-zero fields
        Bytes b{};
        for (int i = 0; i < 8; ++i) {
            if (mask & (1 << i)) {
                std::uint16_t v =
                    static_cast<std::uint16_t>(rng() % 3 == 0 ? 1 + rng() % 15 : rng());
                if (v == 0) v = 1;
                b[2 * i] = v >> 8;
                b[2 * i + 1] = v & 255;
            }
        }
        out.push_back(b);
    }
    for (std::size_t n = 0; n < randomCount; ++n) {
        Bytes b{};
        for (auto& x : b)
            x = static_cast<std::uint8_t>(rng());
        if (n % 4 == 0) {  // an IPv4-mapped address
            b.fill(0);
            b[10] = b[11] = 0xff;
            for (int i = 12; i < 16; ++i)
                b[i] = static_cast<std::uint8_t>(rng());
        }
        out.push_back(b);
    }
    Bytes loopback{};
    loopback[15] = 1;
    out.push_back(loopback);
    Bytes compat{};
    compat[12] = 192;
    compat[13] = 0;
    compat[14] = 2;
    compat[15] = 7;
    out.push_back(compat);
    return out;
}

struct PrefixPair {
    int v4;
    int v6;
};
const PrefixPair kPrefixes[] = {{32, 64},  {24, 48},  {16, 32}, {8, 16},
                                {32, 112}, {24, 128}, {32, 80}};

}  // namespace

class TestPolicyExportNginx : public QObject {
    Q_OBJECT

private slots:
    void everyNginxExportPassesNginxT_data() {
        QTest::addColumn<QString>("policy");
        for (const char* dir : {"resources/policies/", "tests/data/policies/valid/"}) {
            for (const QString& f : QDir(kRoot + dir).entryList({"*.json"}, QDir::Files)) {
                QTest::newRow(qPrintable(f)) << kRoot + dir + f;
            }
        }
    }
    void everyNginxExportPassesNginxT() {
        QFETCH(QString, policy);
        formats::ExportResult result = formats::exportPolicySet(load(policy), formats::ExportTarget::Nginx);
        if (!result.ok()) {
            // Refused: nothing to check with nginx, and the refusal must say why.
            QVERIFY(result.text.empty());
            QVERIFY(!result.notes.empty());
            return;
        }
        NginxCheck check = nginxTest(result.text);
        QVERIFY2(check.exitCode == 0, qPrintable(check.output));
        QVERIFY(check.output.contains("test is successful"));
    }
    void nginxRejectsABrokenExport() {
        // The check above would catch a broken export: nginx -t fails on a bad directive.
        NginxCheck check = nginxTest("limit_req_zone $binary_remote_addr zone=x:1m rate=fast;\n");
        QVERIFY(check.exitCode != 0);
        QVERIFY(check.output.contains("invalid rate"));
    }
    // The address map, evaluated as nginx evaluates it (first matching regex, captures), on
    // nginx's text of every shape of address, gives one key per engine address group.
    void nginxAddressMapGroupsLikeTheEngine() {
        std::vector<Bytes> addresses = sampleAddresses(2000);
        for (PrefixPair pp : kPrefixes) {
            const CompiledMap map(formats::nginxAddressMap(pp.v4, pp.v6));
            for (const Bytes& b : addresses) {
                std::string text = isMapped(b) ? v4Key(b.data() + 12, 32) : nginxText(b);
                std::string got = applyMap(map, text);
                std::string want = expectedKey(b, pp.v4, pp.v6);
                if (got != want) {
                    QFAIL(qPrintable(QString("/%1 /%2 %3: %4, expected %5")
                                         .arg(pp.v4)
                                         .arg(pp.v6)
                                         .arg(QString::fromStdString(text))
                                         .arg(QString::fromStdString(got))
                                         .arg(QString::fromStdString(want))));
                }
                if (isMapped(b)) QCOMPARE(applyMap(map, nginxText(b)), want);
            }
        }
    }
    // The same with a real nginx: the exported map (via $remote_addr set from X-Real-IP), and
    // nginx's own address text matching the model above.
    void liveNginxGroupsLikeTheEngine() {
        std::string policies;
        std::string body = "\"$remote_addr";
        for (std::size_t i = 0; i < std::size(kPrefixes); ++i) {
            policies += std::string(i ? ", " : "") + "{\"name\": \"g" + std::to_string(i) +
                        "\", \"algorithm\": \"leaky_bucket\", \"capacity\": 1000000, "
                        "\"refill_per_second\": 1000000, \"nodelay\": true, \"key\": {\"source\": "
                        "\"peer\", \"ipv4_prefix\": " +
                        std::to_string(kPrefixes[i].v4) +
                        ", \"ipv6_prefix\": " + std::to_string(kPrefixes[i].v6) + "}}";
            body += "|$ratelab_g" + std::to_string(i) + "_addr";
        }
        body += "\"";
        formats::ExportResult exported = formats::exportPolicySet(
            parse("{\"version\": 1, \"store\": {\"max_buckets\": 1000}, \"policies\": [" +
                  policies + "]}"),
            formats::ExportTarget::Nginx);
        QVERIFY(exported.ok());
        LiveNginx nginx;
        QVERIFY(nginx.start(exported.text, "        location / { return 200 " + body + "; }\n"));
        std::vector<Bytes> addresses = sampleAddresses(200);
        for (const Bytes& b : addresses) {
            std::string client = isMapped(b) ? "::ffff:" + v4Key(b.data() + 12, 32) : nginxText(b);
            LiveNginx::Response r = nginx.get("GET", "/", client);
            QCOMPARE(r.status, 200);
            QStringList keys = QString::fromStdString(r.body).split('|');
            QCOMPARE(keys.size(), int(std::size(kPrefixes)) + 1);
            // nginx writes the address exactly as the model does.
            QCOMPARE(keys[0].toStdString(), nginxText(b));
            for (std::size_t i = 0; i < std::size(kPrefixes); ++i) {
                QCOMPARE(keys[int(i) + 1].toStdString(),
                         expectedKey(b, kPrefixes[i].v4, kPrefixes[i].v6));
            }
        }
        LiveNginx::Response v4 = nginx.get("GET", "/", "198.51.100.77");
        QCOMPARE(v4.body, std::string("198.51.100.77|198.51.100.77|198.51.100.0/24|198.51.0.0/16|"
                                      "198.0.0.0/8|198.51.100.77|198.51.100.0/24|198.51.100.77"));
    }
    // A live nginx with exported limits admits what the engine's algorithms admit: the leaky
    // bucket exactly, a token bucket as burst=B-1 nodelay, each route and key on its own.
    void liveNginxAdmitsWhatTheEngineAdmits() {
        PolicySet set = parse(
            "{\"version\": 1, \"store\": {\"max_buckets\": 1000}, \"policies\": ["
            "{\"name\": \"leaky\", \"match\": {\"path_prefix\": \"/a\"}, \"algorithm\": "
            "\"leaky_bucket\", \"capacity\": 5, \"refill_per_second\": 0.016666666666666666, "
            "\"nodelay\": true, \"key\": {\"source\": \"peer\"}, "
            "\"budget\": {\"ipv6_prefixes\": []}},"
            "{\"name\": \"bucket\", \"match\": {\"path_prefix\": \"/b\"}, \"capacity\": 4, "
            "\"refill_per_second\": 0.016666666666666666, \"key\": {\"source\": \"peer\"}},"
            "{\"name\": \"per-method\", \"match\": {\"path_prefix\": \"/c\", \"methods\": "
            "[\"GET\", "
            "\"POST\"]}, \"capacity\": 3, \"refill_per_second\": 0.016666666666666666, "
            "\"key\": {\"source\": \"composite\", \"parts\": [\"route\", \"method\", \"peer\"]}, "
            "\"budget\": {\"enabled\": false}}]}");
        formats::ExportResult exported = formats::exportPolicySet(set, formats::ExportTarget::Nginx);
        QVERIFY(exported.ok());
        // The leaky bucket is exact; the others are approximations, said so.
        for (const formats::ExportNote& n : exported.notes)
            QVERIFY(n.pointer.rfind("/policies/0", 0) != 0);
        QVERIFY(exported.text.find("zone=ratelab_leaky:1m rate=1r/m;\nlimit_req zone=ratelab_leaky "
                                   "burst=5 nodelay;") != std::string::npos);
        // limit_req runs before content handlers but after `return`, so serve a file.
        LiveNginx nginx;
        QVERIFY(nginx.start(exported.text, "        location / { root " + nginx.htmlRoot() +
                                               "; try_files /ok =404; }\n"));

        // The engine's decisions for ten requests at the same instant; nginx's, as sent one
        // after the other (a refusal is 429; anything else, 200 or 405 for POST to a file,
        // passed the limit).
        auto engine = [](const Limit& limit, bool leaky) {
            std::vector<bool> allowed;
            algorithms::LeakyState l;
            algorithms::RateState r;
            for (int i = 0; i < 10; ++i) {
                Decision d = leaky ? algorithms::leakyConsume(l, 1'000'000'000, 1, limit)
                                   : algorithms::tokenBucketConsume(r, 1'000'000'000, 1, limit);
                allowed.push_back(d.allowed);
            }
            return allowed;
        };
        auto live = [&nginx](const char* method, const char* path, const char* client) {
            std::vector<bool> allowed;
            for (int i = 0; i < 10; ++i) {
                int status = nginx.get(method, path, client).status;
                if (status == 0) qWarning("no response from nginx");
                allowed.push_back(status != 429 && status != 0);
            }
            return allowed;
        };
        const std::vector<bool> all(10, true);
        const std::vector<bool> leaky = engine(compileLimit(set.policies[0]), true);
        QCOMPARE(std::count(leaky.begin(), leaky.end(), true), 6l);  // burst + 1
        QCOMPARE(live("GET", "/a", "203.0.113.5"), leaky);
        QCOMPARE(live("GET", "/a/x", "203.0.113.6"), leaky);
        QCOMPARE(nginx.get("GET", "/a", "203.0.113.6").status, 429);  // limit_req_status
        // One /64: a second address in it finds the bucket empty; the next /64 does not.
        QCOMPARE(live("GET", "/a", "2001:db8:1:2::1"), leaky);
        QCOMPARE(live("GET", "/a", "2001:db8:1:2:ffff::9"), std::vector<bool>(10, false));
        QCOMPARE(live("GET", "/a", "2001:db8:1:3::1"), leaky);
        // Outside every route nothing is counted.
        QCOMPARE(live("GET", "/elsewhere", "203.0.113.5"), all);
        QCOMPARE(live("GET", "/ab", "203.0.113.5"), all);

        const std::vector<bool> bucket = engine(compileLimit(set.policies[1]), false);
        QCOMPARE(std::count(bucket.begin(), bucket.end(), true), 4l);
        QCOMPARE(live("GET", "/b", "203.0.113.5"), bucket);

        // Composite of route, method and address: each method has its own bucket, and a
        // method outside the policy's list is not counted.
        const std::vector<bool> three = engine(compileLimit(set.policies[2]), false);
        QCOMPARE(std::count(three.begin(), three.end(), true), 3l);
        QCOMPARE(live("GET", "/c", "203.0.113.5"), three);
        QCOMPARE(live("POST", "/c", "203.0.113.5"), three);
        QCOMPARE(live("DELETE", "/c", "203.0.113.5"), all);
    }
};

QTEST_GUILESS_MAIN(TestPolicyExportNginx)
#include "tst_policy_export_nginx.moc"
