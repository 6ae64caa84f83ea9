// The malformed policy corpus (tests/data/policies/malformed/) through `ratelab-cli validate`:
// every file exits 2 and names FILE:LINE:COLUMN and the problem. Two more inputs, too big to
// commit, are generated at run time: a 10 MB string and 100,000 nested arrays.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fixtures/cli_fixture.h"
#include "ratelab/policy_file.h"

using namespace ratelab;

namespace {

const QString kCorpus = QStringLiteral(RATELAB_SOURCE_DIR "/tests/data/policies/malformed/");

using Run = testing::CliRun;

Run validate(const QStringList& arguments) {
    return testing::runCli(QStringList{"validate"} + arguments, {}, 60'000);
}

// The line of `out` that starts with "path:line:column: error: ", or "".
QString errorLine(const QString& out, const QString& path, int line, int column) {
    const QString head = QStringLiteral("%1:%2:%3: error: ").arg(path).arg(line).arg(column);
    for (const QString& l : out.split('\n')) {
        if (l.startsWith(head)) return l;
    }
    return {};
}

struct Row {
    const char* file;
    CheckLevel level;
    int line;
    int column;
    const char* message;  // a part of the message that names the problem
};

const std::vector<Row>& rows() {
    static const std::vector<Row> table = [] {
        std::vector<Row> t;
        auto row = [&t](const char* file, CheckLevel level, int line, int column,
                        const char* message) {
            t.push_back({file, level, line, column, message});
        };
        const auto syntax = CheckLevel::Syntax;
        const auto schema = CheckLevel::Schema;
        const auto semantics = CheckLevel::Semantics;
        // Syntax: not JSON, not UTF-8, or refused by the JSON layer.
        row("truncated.json", syntax, 5, 1, "unexpected end of input");
        row("trailing-comma.json", syntax, 4, 38, "unexpected '}'");
        row("duplicate-key.json", syntax, 6, 7,
            "duplicate key \"capacity\" (first at line 5, column 7)");
        row("invalid-utf8.json", syntax, 3, 64, "ill-formed UTF-8");
        row("bare-word.json", syntax, 3, 47, "invalid literal");
        row("comment.json", syntax, 2, 3, "expected string literal");
        row("empty.json", syntax, 1, 1, "unexpected end of input");
        row("single-quotes.json", syntax, 2, 3, "expected string literal");
        row("number-overflow.json", syntax, 3, 50, "number overflow parsing '1e400'");
        row("leading-zero.json", syntax, 3, 48, "unexpected number literal");
        // Schema: types, ranges, enums, unknown and required keys, rules within one object.
        row("wrong-type-capacity.json", schema, 4, 34, "expected an integer, found a string");
        row("misspelt-key.json", schema, 5, 7,
            "unknown key \"refil_per_second\"; did you mean \"refill_per_second\"?");
        row("misspelt-top-key.json", schema, 3, 3,
            "unknown key \"polices\"; did you mean \"policies\"?");
        row("missing-version.json", schema, 1, 1, "missing required key \"version\"");
        row("version-2.json", schema, 2, 14, "unsupported version 2: this ratelab reads version 1");
        row("missing-name.json", schema, 4, 5, "missing required key \"name\"");
        row("bad-algorithm.json", schema, 4, 35, "did you mean \"token_bucket\"?");
        row("negative-capacity.json", schema, 4, 34,
            "capacity must be between 0 and 1000000000, found -5");
        row("refill-zero.json", schema, 4, 43, "refill_per_second must be above 0");
        row("window-zero.json", schema, 4, 62,
            "window_ms must be between 1 and 31622400000, found 0");
        row("ipv4-prefix-33.json", schema, 5, 49, "ipv4_prefix must be between 1 and 32, found 33");
        row("ipv6-prefix-0.json", schema, 5, 31, "ipv6_prefix must be between 1 and 128, found 0");
        row("fractional-capacity.json", schema, 4, 34, "capacity must be a whole number");
        row("redis-without-url.json", schema, 3, 12, "a redis store needs \"url\"");
        row("header-source-without-name.json", schema, 5, 46, "source \"header\" needs \"header\"");
        row("prefix-and-pattern.json", schema, 5, 33, "give path_prefix or path_pattern, not both");
        row("lowercase-method.json", schema, 5, 37,
            "method \"post\" must be 1 to 32 upper-case letters");
        row("bad-policy-name.json", schema, 4, 15, "policy name \"my api\" must be");
        row("empty-policies.json", schema, 3, 15, "a policy file needs at least one policy");
        row("delay-without-leaky-bucket.json", schema, 4, 52, "delay is only used by leaky_bucket");
        row("expire-without-haproxy-rate.json", schema, 4, 82,
            "expire_ms is only used by haproxy_rate; remove it or set it to 0");
        row("tiers-without-limits.json", schema, 5, 16, "missing required key \"limits\"");
        row("store-timeout-too-long.json", schema, 4, 42,
            "store_timeout_ms must be between 1 and 60000");
        row("memory-store-with-url.json", schema, 3, 39, "a memory store takes no URL");
        row("url-and-urls.json", schema, 3, 66, "\"url\" and \"urls\" exclude each other");
        row("nodelay-and-delay.json", schema, 5, 33, "nodelay and delay exclude each other");
        row("zero-capacity-token-bucket.json", schema, 4, 63,
            "capacity must be at least 1 for token_bucket");
        row("parts-without-composite.json", schema, 5, 43,
            "\"parts\" is only used with source \"composite\"");
        row("null-prefix-without-pattern.json", schema, 5, 33,
            "path_prefix may be null only when path_pattern is given");
        row("validation-negative-seed.json", schema, 6, 56,
            "seed must be a whole number between 0 and");
        row("tier-name-with-space.json", schema, 6, 59, "tier name \"gold plan\" must be");
        row("namespace-with-braces.json", schema, 3, 77, "namespace \"{ratelab}\" may hold only");
        row("unknown-key-part.json", schema, 5, 58, "key part \"cookie:session\" is not one of");
        row("bad-mode.json", schema, 4, 30, "\"dry_run\" is not one of \"enforce\", \"shadow\"");
        row("nodelay-string.json", schema, 4, 33, "expected true or false, found a string");
        row("store-password-inline.json", schema, 3, 71,
            "a password is never written in the policy file; name where it is with "
            "\"password_env\"");
        row("store-password-env-and-file.json", schema, 5, 64,
            "\"password_env\" and \"password_file\" exclude each other");
        row("store-username-without-password.json", schema, 3, 71,
            "a username needs its password: add \"password_env\" or \"password_file\"");
        row("store-password-env-bad-name.json", schema, 3, 75,
            "password_env \"REDIS-PASSWORD\" must be an environment variable name");
        row("store-password-file-relative.json", schema, 3, 76,
            "password_file \"secrets/redis\" must be an absolute path");
        row("memory-store-with-password.json", schema, 3, 48,
            "a memory store takes no credentials");
        row("calendar-on-token-bucket.json", schema, 4, 71,
            "align \"calendar\" is only used by fixed_window");
        row("calendar-unit-with-window.json", schema, 5, 46,
            "window_ms and calendar_unit exclude each other: a calendar month has its own length");
        row("calendar-unit-without-align.json", schema, 4, 89,
            "calendar_unit needs algorithm \"fixed_window\" with \"align\": \"calendar\"");
        row("routing-unknown.json", schema, 3, 14,
            "\"longest_prefix\" is not one of \"all\", \"most_specific\"");
        row("when-missing-on-default.json", schema, 4, 66,
            "when_missing is only used with source \"header\", \"principal\" or "
            "\"composite\" (source \"default\" always has a key or refuses)");
        // Semantics: what no schema can say.
        row("cidr-host-bits.json", semantics, 5, 29,
            "invalid CIDR \"192.0.2.1/24\": bits are set past the /24 prefix; did you mean "
            "\"192.0.2.0/24\"?");
        row("cidr-bad-length.json", semantics, 3, 48, "invalid CIDR \"10.0.0.0/33\"");
        row("duplicate-policy-names.json", semantics, 5, 15,
            "duplicate policy name \"api\" (also /policies/0)");
        row("cost-over-capacity.json", semantics, 4, 49,
            "cost 25 is more than capacity 10: such a request can never pass");
        row("redis-url-credentials.json", semantics, 3, 38, "credentials in the URL are refused");
        row("redis-url-bad-port.json", semantics, 3, 65,
            "port \"70000\" is not a number from 1 to 65535");
        row("charge-on-sliding-log.json", semantics, 5, 53,
            "charge \"failures\" needs an algorithm that holds each charge as an amount");
        row("failure-status-twice.json", schema, 5, 38,
            "status 401 is listed twice in \"failure_statuses\"");
        row("slot-ttl-below-refill.json", semantics, 5, 34,
            "budget slot_ttl_ms 30000 is shorter than the bucket's time to refill, 100000 ms");
        row("refill-time-beyond-90-days.json", semantics, 4, 35,
            "refilling 1000000 tokens at 0.01 per second takes 100000000000 ms (1157 days), beyond "
            "the engine's 90-day limit");
        row("token-period-beyond-90-days.json", semantics, 4, 62,
            "refill_per_second 1e-09 means one token every 1000000000000 ms (11574 days)");
        row("default-tier-missing.json", semantics, 5, 50,
            "default tier \"gold\" is not one of the tiers \"free\"");
        row("pattern-partial-star.json", semantics, 5, 55, "\"*\" must be a whole segment");
        row("pattern-two-double-stars.json", semantics, 5, 55,
            "\"**\" may appear only once in a pattern");
        row("sliding-window-beyond-90-days.json", semantics, 5, 20,
            "sliding_window keeps the previous window too, so 2 x window_ms = 10368000000 ms (120 "
            "days)");
        row("haproxy-period-too-long.json", semantics, 5, 20,
            "window_ms 3000000000 is beyond HAProxy's longest period, 2147483647 ms (24.8 days)");
        row("window-beyond-90-days.json", semantics, 5, 20,
            "window_ms 8640000000 ms (100 days) is beyond the engine's 90-day limit on durations; "
            "only a fixed_window aligned on the calendar");
        return t;
    }();
    return table;
}

}  // namespace

class TestPolicyCorpus : public QObject {
    Q_OBJECT

private slots:
    void cliReportsEachProblem_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("level");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("message");
        for (const Row& r : rows()) {
            QTest::newRow(r.file) << QString(r.file) << int(r.level) << r.line << r.column
                                  << QString(r.message);
        }
    }

    void cliReportsEachProblem() {
        QFETCH(QString, file);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, message);
        const QString path = kCorpus + file;
        Run run = validate({path});
        QCOMPARE(run.exitCode, 2);
        QString found = errorLine(run.out, path, line, column);
        if (found.isEmpty()) qWarning("%s", qPrintable(run.out));
        QVERIFY2(!found.isEmpty(), "no error at the expected line and column");
        QVERIFY2(found.contains(message), qPrintable(found));
        QVERIFY(run.out.contains(path + ": invalid ("));
        QVERIFY(!run.out.contains("hunter2"));  // a credential is never repeated
    }

    // The same files in process: the first error has the row's level, and nothing crashes.
    void loaderTagsTheLevel_data() { cliReportsEachProblem_data(); }
    void loaderTagsTheLevel() {
        QFETCH(QString, file);
        QFETCH(int, level);
        QFETCH(int, line);
        QFETCH(int, column);
        PolicyLoadResult result = loadPolicyFile((kCorpus + file).toStdString());
        QVERIFY(!result.ok());
        QCOMPARE(result.levels.size(), result.diagnostics.size());
        bool seen = false;
        for (std::size_t i = 0; i < result.diagnostics.size(); ++i) {
            const Diagnostic& d = result.diagnostics[i];
            if (d.line == line && d.column == column && d.severity == Diagnostic::Severity::Error) {
                QCOMPARE(int(result.levels[i]), level);
                seen = true;
            }
        }
        QVERIFY(seen);
        QCOMPARE(result.passed(static_cast<CheckLevel>(level)), false);
    }

    void everyCorpusFileHasARow() {
        QStringList files = QDir(kCorpus).entryList({"*.json"}, QDir::Files);
        QVERIFY(files.size() >= 30);
        QCOMPARE(std::size_t(files.size()), rows().size());
        for (const Row& r : rows())
            QVERIFY2(files.contains(r.file), r.file);
    }

    void tenMegabyteStringIsRefused() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("huge-string.json");
        {
            std::ofstream out(path.toStdString(), std::ios::binary);
            out << "{\n  \"version\": 1,\n  \"policies\": [ { \"name\": \"api\",\n"
                   "    \"bypass\": { \"principals\": [\""
                << std::string(10'000'000, 'x') << "\"] } } ]\n}\n";
        }
        Run run = validate({path});
        QCOMPARE(run.exitCode, 2);
        QString found = errorLine(run.out, path, 4, 32);
        QVERIFY2(found.contains("string of 10000000 bytes is longer than the 64 KiB limit"),
                 qPrintable(run.out.left(2000)));
        QVERIFY(run.out.size() < 4096);  // the string is not echoed back
    }

    void hundredThousandNestedArraysAreRefused() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("deep.json");
        {
            std::ofstream out(path.toStdString(), std::ios::binary);
            out << "{\"version\": 1, \"policies\": " << std::string(100'000, '[')
                << std::string(100'000, ']') << "}\n";
        }
        Run run = validate({path});
        QCOMPARE(run.exitCode, 2);
        // "policies" is depth 2; the 63rd '[' after it is the 65th level.
        QString found = errorLine(run.out, path, 1, 28 + 63);
        QVERIFY2(found.contains("nesting deeper than 64 levels"), qPrintable(run.out.left(2000)));
    }

    void everyProblemIsReportedAtOnce() {
        Run run = validate({kCorpus + "../valid/minimal.json", "--json"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.contains("\"valid\": true"));
        Run json = validate({kCorpus + "cost-over-capacity.json", "--json"});
        QCOMPARE(json.exitCode, 2);
        QJsonObject report = QJsonDocument::fromJson(json.out.toUtf8()).object();
        QCOMPARE(report["valid"].toBool(true), false);
        QJsonObject first = report["diagnostics"].toArray().first().toObject();
        QCOMPARE(first["level"].toString(), QString("semantics"));
        QCOMPARE(first["severity"].toString(), QString("error"));
        QCOMPARE(first["line"].toInt(), 4);
        QCOMPARE(first["column"].toInt(), 49);
        QCOMPARE(first["pointer"].toString(), QString("/policies/0/cost"));

        QTemporaryDir dir;
        const QString path = dir.filePath("many.json");
        {
            std::ofstream out(path.toStdString(), std::ios::binary);
            out << "{\n"
                   "  \"version\": 1,\n"
                   "  \"trusted_proxies\": { \"cidrs\": [\"10.1.2.3/8\"], \"header\": "
                   "\"x-forwarded\" },\n"
                   "  \"policies\": [\n"
                   "    { \"name\": \"a\", \"capacty\": 5, \"mode\": \"shadow\" },\n"
                   "    { \"name\": \"b\", \"capacity\": 2, \"cost\": 3 },\n"
                   "    { \"name\": \"b\", \"key\": { \"ipv4_prefix\": 40 } }\n"
                   "  ]\n"
                   "}\n";
        }
        run = validate({path});
        QCOMPARE(run.exitCode, 2);
        // In file order, each where it is written, across levels.
        QStringList lines = run.out.split('\n');
        QCOMPARE(lines.size(), 7);  // five errors, the summary, and the final newline
        QVERIFY(lines[0].startsWith(path + ":3:34: error: invalid CIDR \"10.1.2.3/8\""));
        QVERIFY(lines[1].startsWith(path + ":3:59: error: \"x-forwarded\" is not one of"));
        QVERIFY(lines[2].startsWith(path + ":5:20: error: unknown key \"capacty\""));
        QVERIFY(lines[3].startsWith(path + ":6:43: error: cost 3 is more than capacity 2"));
        QVERIFY(lines[4].startsWith(path + ":7:44: error: ipv4_prefix must be between 1 and 32"));
        QCOMPARE(lines[5], path + ": invalid (5 errors, 0 warnings)");
    }

    void warningsDoNotFailValidation() {
        QTemporaryDir dir;
        const QString path = dir.filePath("shadow.json");
        {
            std::ofstream out(path.toStdString(), std::ios::binary);
            out << "{ \"version\": 1, \"policies\": [ { \"name\": \"api\", \"mode\": \"shadow\" } "
                   "] }\n";
        }
        Run run = validate({path});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.contains(path + ":1:56: warning: policy \"api\" is in shadow mode"));
        QVERIFY(run.out.contains(path + ": valid (0 errors, 1 warning)"));
    }

    void previousVersionEnablesChangeLints() {
        QTemporaryDir dir;
        const QString old = dir.filePath("old.json");
        const QString now = dir.filePath("new.json");
        std::ofstream(old.toStdString()) << "{ \"version\": 1, \"policies\": [ { \"name\": \"q\", "
                                            "\"algorithm\": \"fixed_window\",\n"
                                            "  \"capacity\": 100, \"window_ms\": 60000 } ] }\n";
        std::ofstream(now.toStdString()) << "{ \"version\": 1, \"policies\": [ { \"name\": \"q\", "
                                            "\"algorithm\": \"fixed_window\",\n"
                                            "  \"capacity\": 100, \"window_ms\": 1000 } ] }\n";
        Run plain = validate({now});
        QCOMPARE(plain.exitCode, 0);
        QVERIFY2(!plain.out.contains(": warning:"), qPrintable(plain.out));
        Run compared = validate({now, "--previous", old});
        QCOMPARE(compared.exitCode, 0);
        QVERIFY2(compared.out.contains(now + ":2:33: warning: window_ms changed from 60000 to 1000 "
                                             "under the same name \"q\""),
                 qPrintable(compared.out));
        Run broken = validate({now, "--previous", kCorpus + "truncated.json"});
        QCOMPARE(broken.exitCode, 2);
        QVERIFY(broken.err.contains("the previous version"));
    }

    // Seeded mutations of a rich valid file (bytes flipped, inserted, deleted, truncated): the
    // loader never crashes (the sanitizer build runs this too), and every problem it reports
    // has a position inside the text.
    void mutatedFilesNeverCrash() {
        std::ifstream in(RATELAB_SOURCE_DIR "/tests/data/policies/valid/everything.json",
                         std::ios::binary);
        const std::string original((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
        QVERIFY(original.size() > 1000);
        std::mt19937_64 rng(4);
        const char alphabet[] = "{}[]\",:0123456789.-eE+ \n\\utrfnalsx\xff\xc3";
        int invalid = 0;
        for (int round = 0; round < 3000; ++round) {
            std::string text = original;
            for (int edits = 1 + int(rng() % 4); edits > 0; --edits) {
                std::size_t at = rng() % text.size();
                // Whole new strings rather than insert/erase in place: g++ 12 raises a false
                // -Wrestrict on std::string::insert at -O2 (GCC bug 105329).
                const char c = alphabet[rng() % (sizeof alphabet - 1)];
                switch (rng() % 4) {
                    case 0:
                        text[at] = c;
                        break;
                    case 1:
                        text = text.substr(0, at) + std::string(1, c) + text.substr(at);
                        break;
                    case 2:
                        text = text.substr(0, at) +
                               text.substr(std::min(text.size(), at + 1 + rng() % 8));
                        break;
                    default:
                        text = text.substr(0, at);
                        break;
                }
                if (text.empty()) text = "{";
            }
            PolicyLoadResult r = parsePolicyText(text, "mutant.json");
            QCOMPARE(r.levels.size(), r.diagnostics.size());
            const int lines = 1 + int(std::count(text.begin(), text.end(), '\n'));
            for (const Diagnostic& d : r.diagnostics) {
                QVERIFY2(d.line >= 1 && d.line <= lines && d.column >= 1,
                         formatDiagnostic(d).c_str());
            }
            if (!r.ok()) {
                ++invalid;
                QVERIFY(hasErrors(r.diagnostics));
            } else {
                // What loads saves and loads again to the same set.
                PolicyLoadResult again = parsePolicyText(savePolicyText(*r.policies), "again.json");
                QVERIFY(again.ok() && *again.policies == *r.policies);
            }
        }
        QVERIFY(invalid > 1000);  // the mutations do break most files
    }

    // A wrong command line exits 64, a file that cannot be read 74, an invalid policy 2.
    void badArgumentsAndUnreadableFiles() {
        Run unknown = validate({"--frobnicate", kCorpus + "empty.json"});
        QCOMPARE(unknown.exitCode, 64);
        QVERIFY(unknown.err.contains("frobnicate"));
        Run none = validate({});
        QCOMPARE(none.exitCode, 64);
        QVERIFY(none.err.contains("missing P.json"));
        Run missing = validate({kCorpus + "no-such-file.json"});
        QCOMPARE(missing.exitCode, 74);
        QVERIFY(missing.out.contains(
            "no-such-file.json: error: cannot open the file: No such file or directory"));
        Run directory = validate({kCorpus});
        QCOMPARE(directory.exitCode, 74);
        QVERIFY2(directory.out.contains("malformed/: error: is a directory"),
                 qPrintable(directory.out));
    }
};

QTEST_GUILESS_MAIN(TestPolicyCorpus)
#include "tst_policy_corpus.moc"
