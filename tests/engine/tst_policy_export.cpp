// Exports: golden files for nginx, Envoy and HAProxy (neither envoy nor haproxy is installed, so
// their exports are checked against goldens and, for Envoy, parsed as YAML); `nginx -t` on every
// nginx export; refusals; and a live nginx, started by the test on a unix socket, that shows the
// address map groups clients as the engine does and that the exported limits admit what the
// engine's algorithms admit.

#include <poll.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "algorithms/leaky_bucket.h"
#include "algorithms/rate.h"
#include "policy/export_targets.h"
#include "ratelab/policy_export.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

namespace {

const QString kRoot = QStringLiteral(RATELAB_SOURCE_DIR "/");
const char* const kNginx = "/usr/sbin/nginx";

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

PolicySet load(const QString& path) {
    PolicyLoadResult r = loadPolicyFile(path.toStdString());
    if (!r.ok()) qFatal("%s does not load", qPrintable(path));
    return *r.policies;
}

PolicySet parse(const std::string& text) {
    PolicyLoadResult r = parsePolicyText(text, "inline.json");
    if (!r.ok()) {
        for (const Diagnostic& d : r.diagnostics)
            qWarning("%s", formatDiagnostic(d).c_str());
        qFatal("inline policy does not load");
    }
    return *r.policies;
}

// An nginx.conf around an http-level snippet, with every path inside `dir` so that neither
// `nginx -t` nor a test server needs root-owned files.
std::string nginxConf(const QString& dir, const std::string& http, const std::string& server,
                      bool serve) {
    std::string d = dir.toStdString();
    std::string out = "pid " + d + "/nginx.pid;\nerror_log " + d + "/error.log;\n";
    if (serve) out += "daemon off;\nmaster_process off;\n";
    out += "events { worker_connections 64; }\nhttp {\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
        out += std::string("    ") + temp + "_temp_path " + d + "/" + temp + ";\n";
    }
    out += "    access_log off;\n" + http + "\n    server {\n        listen unix:" + d +
           "/nginx.sock;\n" + server + "    }\n}\n";
    return out;
}

struct NginxCheck {
    int exitCode = -1;
    QString output;
};

NginxCheck nginxTest(const std::string& exported) {
    QTemporaryDir dir;
    writeFile(dir.filePath("export.conf"), exported);
    writeFile(
        dir.filePath("nginx.conf"),
        nginxConf(dir.path(), "    include " + dir.filePath("export.conf").toStdString() + ";",
                  "        location / { return 204; }\n", false));
    QProcess nginx;
    nginx.start(kNginx, {"-t", "-p", dir.path(), "-c", dir.filePath("nginx.conf"), "-e",
                         dir.filePath("error.log")});
    NginxCheck check;
    if (!nginx.waitForFinished(60'000)) return check;
    check.exitCode = nginx.exitStatus() == QProcess::NormalExit ? nginx.exitCode() : -2;
    check.output = QString::fromUtf8(nginx.readAllStandardError());
    return check;
}

// nginx in the foreground, single process, serving on a unix socket in a temporary directory.
// Requests say which client they come from in X-Real-IP (the realip module trusts the socket).
class LiveNginx {
public:
    bool start(const std::string& http, const std::string& server) {
        if (!dir_.isValid()) return false;
        std::string realip = "    set_real_ip_from unix:;\n    real_ip_header X-Real-IP;\n";
        QDir(dir_.path()).mkdir("html");
        writeFile(dir_.filePath("html/ok"), "ok\n");
        writeFile(dir_.filePath("nginx.conf"), nginxConf(dir_.path(), realip + http, server, true));
        // nginx writes its pid file once its sockets listen: wait for it without sleeping.
        int watch = inotify_init1(IN_CLOEXEC);
        if (watch < 0 || inotify_add_watch(watch, dir_.path().toLocal8Bit().constData(),
                                           IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
            return false;
        }
        process_.setProcessChannelMode(QProcess::ForwardedChannels);
        process_.start(kNginx, {"-p", dir_.path(), "-c", dir_.filePath("nginx.conf"), "-e",
                                dir_.filePath("error.log")});
        bool ready = false;
        for (int round = 0; round < 100 && !ready; ++round) {
            pollfd p{watch, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) {
                if (process_.state() == QProcess::NotRunning) break;
                continue;
            }
            alignas(inotify_event) char buffer[4096];
            ssize_t n = read(watch, buffer, sizeof buffer);
            for (ssize_t at = 0; at < n;) {
                auto* e = reinterpret_cast<inotify_event*>(buffer + at);
                if (e->len && std::string_view(e->name) == "nginx.pid") ready = true;
                at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
            }
        }
        close(watch);
        if (!ready) qWarning("%s", readFile(dir_.filePath("error.log")).c_str());
        return ready;
    }

    ~LiveNginx() {
        if (process_.state() != QProcess::NotRunning) {
            process_.terminate();  // our own child only
            if (!process_.waitForFinished(10'000)) process_.kill();
            process_.waitForFinished(10'000);
        }
    }

    struct Response {
        int status = 0;
        std::string body;
    };

    /// The directory served as the document root, for `root` in a location.
    std::string htmlRoot() const { return dir_.filePath("html").toStdString(); }

    Response get(const std::string& method, const std::string& path, const std::string& client) {
        Response response;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::string socketPath = dir_.filePath("nginx.sock").toStdString();
        std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socketPath.c_str());
        timeval timeout{10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
            close(fd);
            return response;
        }
        std::string request =
            method + " " + path + " HTTP/1.0\r\nHost: test\r\nX-Real-IP: " + client + "\r\n\r\n";
        if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
            close(fd);
            return response;
        }
        std::string reply;
        char buffer[4096];
        for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
            reply.append(buffer, n);
        close(fd);
        if (reply.rfind("HTTP/1.1 ", 0) == 0) response.status = std::atoi(reply.c_str() + 9);
        std::size_t body = reply.find("\r\n\r\n");
        if (body != std::string::npos) response.body = reply.substr(body + 4);
        return response;
    }

private:
    QTemporaryDir dir_;
    QProcess process_;
};

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
    explicit CompiledMap(std::vector<policy::NginxMapEntry> map) : entries(std::move(map)) {
        for (const policy::NginxMapEntry& e : entries) {
            patterns.emplace_back(QString::fromStdString(e.pattern));
        }
    }
    std::vector<policy::NginxMapEntry> entries;
    std::vector<QRegularExpression> patterns;
};

// What nginx's map does with `text`: the first matching regex's value, captures substituted.
std::string applyMap(const CompiledMap& map, const std::string& text) {
    for (std::size_t k = 0; k < map.entries.size(); ++k) {
        const policy::NginxMapEntry& e = map.entries[k];
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

class TestPolicyExport : public QObject {
    Q_OBJECT

private slots:
    void matchesGoldenFiles_data() {
        QTest::addColumn<QString>("policy");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("golden");
        auto row = [](const QString& policy, const char* target) {
            QString name = QFileInfo(policy).completeBaseName();
            QTest::newRow(qPrintable(name + "." + target))
                << kRoot + policy << QString(target)
                << kRoot + "tests/data/policies/exports/" + name + "." + target + ".golden";
        };
        for (const char* t : {"nginx", "envoy", "haproxy"}) {
            row("resources/policies/default.json", t);
            row("resources/policies/nginx-compatible.json", t);
            row("tests/data/policies/valid/with-validation.json", t);
        }
        row("tests/data/policies/valid/nginx-features.json", "nginx");
        row("tests/data/policies/valid/envoy-features.json", "envoy");
        row("tests/data/policies/valid/haproxy-features.json", "haproxy");
    }
    void matchesGoldenFiles() {
        QFETCH(QString, policy);
        QFETCH(QString, target);
        QFETCH(QString, golden);
        ExportResult result =
            exportPolicySet(load(policy), *parseExportTarget(target.toStdString()));
        QVERIFY(result.ok());
        QCOMPARE(QString::fromStdString(result.text), QString::fromStdString(readFile(golden)));
        // Deterministic: the same set gives the same bytes.
        QCOMPARE(exportPolicySet(load(policy), *parseExportTarget(target.toStdString())).text,
                 result.text);
    }

    void cliWritesTheSameAsTheLibrary() {
        QTemporaryDir dir;
        QProcess cli;
        cli.start(QStringLiteral(RATELAB_BINARY_DIR "/app/cli/ratelab-cli"),
                  {"export", kRoot + "resources/policies/default.json", "--to", "haproxy", "-o",
                   dir.filePath("out.cfg")});
        QVERIFY(cli.waitForFinished(60'000));
        QCOMPARE(cli.exitCode(), 0);
        QCOMPARE(readFile(dir.filePath("out.cfg")),
                 readFile(kRoot + "tests/data/policies/exports/default.haproxy.golden"));
        QString notes = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY(
            notes.contains("resources/policies/default.json:29:19: warning: haproxy: policy "
                           "\"api\": the default chain"));

        QProcess refused;
        refused.start(QStringLiteral(RATELAB_BINARY_DIR "/app/cli/ratelab-cli"),
                      {"export", kRoot + "resources/policies/tiers.json", "--to", "nginx", "-o",
                       dir.filePath("tiers.conf")});
        QVERIFY(refused.waitForFinished(60'000));
        QCOMPARE(refused.exitCode(), 2);
        QVERIFY(!QFile::exists(dir.filePath("tiers.conf")));
        QString err = QString::fromUtf8(refused.readAllStandardError());
        QVERIFY2(err.contains("resources/policies/tiers.json:29:19: error: nginx: policy "
                              "\"api-plans\": it keys on the verified principal"),
                 qPrintable(err));
        QVERIFY(err.contains("nothing exported"));

        QProcess badTarget;
        badTarget.start(QStringLiteral(RATELAB_BINARY_DIR "/app/cli/ratelab-cli"),
                        {"export", kRoot + "resources/policies/default.json", "--to", "caddy"});
        QVERIFY(badTarget.waitForFinished(60'000));
        QCOMPARE(badTarget.exitCode(), 2);
    }

    // The nginx-compatible policy is reproduced exactly: no approximation at all.
    void nginxCompatibleIsExact() {
        ExportResult nginx = exportPolicySet(
            load(kRoot + "resources/policies/nginx-compatible.json"), ExportTarget::Nginx);
        QVERIFY(nginx.ok());
        QVERIFY(nginx.notes.empty());
        QVERIFY(
            nginx.text.find("limit_req_zone $ratelab_web_addr zone=ratelab_web:20m rate=10r/s;\n"
                            "limit_req zone=ratelab_web burst=20 nodelay;\n") != std::string::npos);
        QVERIFY(nginx.text.find("limit_req_status 429;") != std::string::npos);
    }

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
        ExportResult result = exportPolicySet(load(policy), ExportTarget::Nginx);
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

    void shippedExportableToNginx() {
        for (const char* f : {"default", "nginx-compatible"}) {
            QVERIFY(exportPolicySet(load(kRoot + "resources/policies/" + f + ".json"),
                                    ExportTarget::Nginx)
                        .ok());
        }
    }

    void nginxRejectsABrokenExport() {
        // The check above would catch a broken export: nginx -t fails on a bad directive.
        NginxCheck check = nginxTest("limit_req_zone $binary_remote_addr zone=x:1m rate=fast;\n");
        QVERIFY(check.exitCode != 0);
        QVERIFY(check.output.contains("invalid rate"));
    }

    void envoyExportsAreYaml() {
        QStringList files;
        for (const QString& f :
             QDir(kRoot + "tests/data/policies/exports").entryList({"*.envoy.golden"})) {
            files << kRoot + "tests/data/policies/exports/" + f;
        }
        QVERIFY(files.size() >= 4);
        const char* script =
            "import sys, yaml\n"
            "for path in sys.argv[1:]:\n"
            "    doc = yaml.safe_load(open(path))\n"
            "    filters = doc['http_filters']\n"
            "    assert filters, path\n"
            "    for f in filters:\n"
            "        c = f['typed_config']\n"
            "        assert c['@type'].endswith('local_ratelimit.v3.LocalRateLimit'), path\n"
            "        assert c['filter_enabled']['default_value']['numerator'] == 100\n"
            "        for d in c['descriptors']:\n"
            "            tb = d['token_bucket']\n"
            "            assert tb['max_tokens'] >= 1 and tb['tokens_per_fill'] >= 1\n"
            "            s = float(tb['fill_interval'].rstrip('s'))\n"
            "            assert s >= 0.05, path\n"
            "        assert len(c['rate_limits']) == len(c['descriptors'])\n"
            "print('ok', len(sys.argv) - 1)\n";
        QProcess python;
        python.start("/usr/bin/python3", QStringList{"-c", script} + files);
        QVERIFY(python.waitForFinished(60'000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QCOMPARE(QString::fromUtf8(python.readAllStandardOutput()).trimmed(),
                 QString("ok %1").arg(files.size()));
    }

    void refusals_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("targets");  // the targets that refuse
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("message");
        auto one = [](const std::string& members, const std::string& top = "") {
            return QString::fromStdString("{\"version\": 1, " + top +
                                          "\"policies\": [{\"name\": \"p\", " + members + "}]}");
        };
        QTest::newRow("principal key")
            << one("\"key\": {\"source\": \"principal\"}") << "nginx envoy haproxy"
            << "/policies/0/key/source"
            << "keys on the verified principal";
        QTest::newRow("tiers")
            << one("\"key\": {\"source\": \"principal\"}, \"tiers\": {\"attribute\": \"plan\", "
                   "\"default\": \"a\", \"limits\": {\"a\": {\"capacity\": 5}}}")
            << "nginx envoy haproxy"
            << "/policies/0/tiers"
            << "verified attribute (tiers)";
        QTest::newRow("sliding log") << one("\"algorithm\": \"sliding_log\"") << "nginx envoy"
                                     << "/policies/0/algorithm"
                                     << "up to twice the quota";
        QTest::newRow("sliding window")
            << one("\"algorithm\": \"sliding_window\", \"key\": {\"source\": \"peer\"}")
            << "nginx envoy"
            << "/policies/0/algorithm"
            << "up to twice the quota";
        QTest::newRow("bypass ranges")
            << one("\"bypass\": {\"cidrs\": [\"10.0.0.0/8\"]}") << "envoy"
            << "/policies/0/bypass/cidrs"
            << "exempts address ranges";
        QTest::newRow("bypass principals")
            << one("\"bypass\": {\"principals\": [\"ops\"]}") << "nginx envoy haproxy"
            << "/policies/0/bypass/principals"
            << "exempts verified principals";
        QTest::newRow("attribute part") << one("\"key\": {\"source\": \"composite\", \"parts\": "
                                               "[\"route\", \"attribute:account\"]}")
                                        << "nginx envoy haproxy"
                                        << "/policies/0/key/parts/1"
                                        << "\"attribute:account\"";
        QTest::newRow("method part in haproxy")
            << one("\"key\": {\"source\": \"composite\", \"parts\": [\"route\", \"method\"]}, "
                   "\"budget\": {\"enabled\": false}")
            << "haproxy"
            << "/policies/0/key/parts/1"
            << "cannot build into a key";
        QTest::newRow("budgeted header key")
            << one("\"key\": {\"source\": \"header\", \"header\": \"x-api-key\"}")
            << "nginx envoy haproxy"
            << "/policies/0/budget/enabled"
            << "fresh bucket per request";
        QTest::newRow("ipv6 /56 in nginx") << one("\"key\": {\"ipv6_prefix\": 56}") << "nginx"
                                           << "/policies/0/key/ipv6_prefix"
                                           << "whole 16-bit fields";
        QTest::newRow("ipv4 /20 in nginx") << one("\"key\": {\"ipv4_prefix\": 20}") << "nginx"
                                           << "/policies/0/key/ipv4_prefix"
                                           << "whole octets";
        QTest::newRow("header name nginx cannot name")
            << one("\"key\": {\"source\": \"header\", \"header\": \"x.key\"}, \"budget\": "
                   "{\"enabled\": false}")
            << "nginx"
            << "/policies/0/key/header"
            << "$http_ variable";
        QTest::newRow("forwarded header")
            << one("\"capacity\": 5",
                   "\"trusted_proxies\": {\"cidrs\": [\"10.0.0.0/8\"], "
                   "\"header\": \"forwarded\"}, ")
            << "nginx envoy haproxy"
            << "/trusted_proxies/header"
            << "Forwarded";
        QTest::newRow("x-real-ip in envoy")
            << one("\"capacity\": 5",
                   "\"trusted_proxies\": {\"cidrs\": [\"10.0.0.0/8\"], "
                   "\"header\": \"x-real-ip\"}, ")
            << "envoy"
            << "/trusted_proxies/header"
            << "X-Forwarded-For only";
        QTest::newRow("below 1r/m") << one("\"capacity\": 10, \"refill_per_second\": 0.001, "
                                           "\"key\": {\"source\": \"peer\"}")
                                    << "nginx"
                                    << "/policies/0/refill_per_second"
                                    << "below nginx's slowest rate (1r/m)";
        QTest::newRow("window under 50 ms")
            << one("\"algorithm\": \"fixed_window\", \"capacity\": 5, \"window_ms\": 20") << "envoy"
            << "/policies/0/window_ms"
            << "at most every 50 ms";
        QTest::newRow("mixed shadow") << QString(
                                             "{\"version\": 1, \"policies\": [{\"name\": \"a\"}, "
                                             "{\"name\": \"b\", \"mode\": \"shadow\"}]}")
                                      << "nginx"
                                      << "/policies/1/mode"
                                      << "limit_req_dry_run applies to every limit_req";
        QTest::newRow("four policies")
            << QString(
                   "{\"version\": 1, \"policies\": [{\"name\": \"a\"}, {\"name\": \"b\"}, "
                   "{\"name\": \"c\"}, {\"name\": \"d\"}]}")
            << "haproxy"
            << "/policies/3"
            << "3 stick counters";
    }
    void refusals() {
        QFETCH(QString, file);
        QFETCH(QString, targets);
        QFETCH(QString, pointer);
        QFETCH(QString, message);
        PolicySet set = parse(file.toStdString());
        for (ExportTarget target :
             {ExportTarget::Nginx, ExportTarget::Envoy, ExportTarget::Haproxy}) {
            const QString name = QString::fromStdString(std::string(exportTargetName(target)));
            ExportResult result = exportPolicySet(set, target);
            bool refused = false;
            for (const ExportNote& note : result.notes) {
                if (note.kind != ExportNote::Kind::Refused) continue;
                if (QString::fromStdString(note.pointer) != pointer) continue;
                QVERIFY2(QString::fromStdString(note.message).contains(message),
                         note.message.c_str());
                QVERIFY(note.message.rfind(name.toStdString() + ": ", 0) == 0);
                refused = true;
            }
            QCOMPARE(refused, targets.split(' ').contains(name));
            if (refused) {
                QVERIFY(!result.ok());
                QVERIFY(result.text.empty());
            }
        }
    }

    void nginxRates_data() {
        QTest::addColumn<qlonglong>("milli");
        QTest::addColumn<QString>("rate");
        QTest::addColumn<qlonglong>("applied");
        QTest::newRow("10/s exact") << 10000ll << "10r/s" << 10000ll;
        QTest::newRow("0.5/s exact") << 500ll << "30r/m" << 500ll;
        QTest::newRow("1/min exact") << 16ll << "1r/m" << 16ll;
        QTest::newRow("20/min exact") << 333ll << "20r/m" << 333ll;
        QTest::newRow("2.5/s exact") << 2500ll << "150r/m" << 2500ll;
        QTest::newRow("7/s in whole ns") << 6999ll << "7r/s" << 7000ll;  // 0.014% faster
        QTest::newRow("never over 1% faster") << 11ll << "" << 0ll;
        QTest::newRow("below any rate") << 0ll << "" << 0ll;
        QTest::newRow("1.7/s nearest") << 1700ll << "102r/m" << 1700ll;
    }
    void nginxRates() {
        QFETCH(qlonglong, milli);
        QFETCH(QString, rate);
        QFETCH(qlonglong, applied);
        long long got = 0;
        QCOMPARE(QString::fromStdString(policy::nginxRate(milli, got)), rate);
        if (!rate.isEmpty()) QCOMPARE(got, applied);
    }

    // The address map, evaluated as nginx evaluates it (first matching regex, captures), on
    // nginx's text of every shape of address, gives one key per engine address group.
    void nginxAddressMapGroupsLikeTheEngine() {
        std::vector<Bytes> addresses = sampleAddresses(2000);
        for (PrefixPair pp : kPrefixes) {
            const CompiledMap map(policy::nginxAddressMap(pp.v4, pp.v6));
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
        ExportResult exported = exportPolicySet(
            parse("{\"version\": 1, \"store\": {\"max_buckets\": 1000}, \"policies\": [" +
                  policies + "]}"),
            ExportTarget::Nginx);
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
            "\"nodelay\": true, \"key\": {\"source\": \"peer\"}},"
            "{\"name\": \"bucket\", \"match\": {\"path_prefix\": \"/b\"}, \"capacity\": 4, "
            "\"refill_per_second\": 0.016666666666666666, \"key\": {\"source\": \"peer\"}},"
            "{\"name\": \"per-method\", \"match\": {\"path_prefix\": \"/c\", \"methods\": "
            "[\"GET\", "
            "\"POST\"]}, \"capacity\": 3, \"refill_per_second\": 0.016666666666666666, "
            "\"key\": {\"source\": \"composite\", \"parts\": [\"route\", \"method\", \"peer\"]}, "
            "\"budget\": {\"enabled\": false}}]}");
        ExportResult exported = exportPolicySet(set, ExportTarget::Nginx);
        QVERIFY(exported.ok());
        // The leaky bucket is exact; the others are approximations, said so.
        for (const ExportNote& n : exported.notes)
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
            algo::LeakyState l;
            algo::RateState r;
            for (int i = 0; i < 10; ++i) {
                Decision d = leaky ? algo::leakyConsume(l, 1'000'000'000, 1, limit)
                                   : algo::tokenBucketConsume(r, 1'000'000'000, 1, limit);
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
        const std::vector<bool> leaky = engine(set.policies[0].limit, true);
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

        const std::vector<bool> bucket = engine(set.policies[1].limit, false);
        QCOMPARE(std::count(bucket.begin(), bucket.end(), true), 4l);
        QCOMPARE(live("GET", "/b", "203.0.113.5"), bucket);

        // Composite of route, method and address: each method has its own bucket, and a
        // method outside the policy's list is not counted.
        const std::vector<bool> three = engine(set.policies[2].limit, false);
        QCOMPARE(std::count(three.begin(), three.end(), true), 3l);
        QCOMPARE(live("GET", "/c", "203.0.113.5"), three);
        QCOMPARE(live("POST", "/c", "203.0.113.5"), three);
        QCOMPARE(live("DELETE", "/c", "203.0.113.5"), all);
    }
};

QTEST_GUILESS_MAIN(TestPolicyExport)
#include "tst_policy_export.moc"
