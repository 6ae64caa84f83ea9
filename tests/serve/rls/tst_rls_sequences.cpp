// The call sequences of envoyproxy/ratelimit's own tests (its Redis cache, limiter, service,
// config and integration tests; the numbers S1..S31 are those of the behaviour notes the suite
// was written from), each run on the memory store and on a Redis store this suite starts, with
// the time injected. Where the original's tests mock Redis's counter, the sequence first
// charges the hits that bring the counter there.

#include <QtTest>

#include <memory>

#include "fixtures/redis_fixture.h"
#include "ratelab/memory_store.h"
#include "ratelab/redis_store.h"
#include "rls_configs.h"
#include "rls_sequence.h"

using namespace ratelab;
using namespace ratelab::rlstest;
namespace fe = ratelab::formats::envoy;

namespace {

enum Flags { kGlobalShadow = 1, kGlobalQuota = 2, kMerge = 4 };

// A configuration written as one text: files separated by "#--- NAME" lines.
std::shared_ptr<const fe::RlsConfig> loadConfig(const char* text, bool merge) {
    std::vector<fe::RlsSource> sources{{"config.yaml", {}}};
    for (const QString& line : QString(text).split('\n')) {
        if (line.startsWith("#--- ")) {
            sources.push_back({line.mid(5).toStdString(), {}});
        } else {
            sources.back().text += line.toStdString() + "\n";
        }
    }
    fe::RlsLoadResult r = fe::parseRlsConfig(sources, fe::RlsLoadOptions{.mergeDomains = merge});
    if (!r.ok()) qFatal("%s", formatDiagnostics(r.diagnostics).c_str());
    return std::make_shared<const fe::RlsConfig>(std::move(*r.config));
}

QStringList generated(int from, int to, const std::function<QString(int)>& line) {
    QStringList out;
    for (int i = from; i < to; ++i)
        out << line(i);
    return out;
}

}  // namespace

class TestRlsSequences : public QObject {
    Q_OBJECT

    testing::RedisServer redis_;
    int namespaces_ = 0;

    std::shared_ptr<Store> storeFor(const QString& kind) {
        if (kind == "memory") return makeMemoryStore();
        RedisStoreOptions options;
        options.urls = {redis_.url()};
        options.keyNamespace = "rls" + std::to_string(++namespaces_);
        options.timeSource = RedisTimeSource::Caller;
        std::string error;
        std::shared_ptr<Store> store = makeRedisStore(options, &error);
        if (!store) qFatal("%s", error.c_str());
        return store;
    }

private slots:
    void initTestCase() {
        std::string error;
        QVERIFY2(redis_.start(&error), error.c_str());
    }

    void sequences_data() {
        QTest::addColumn<QString>("store");
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("flags");
        QTest::addColumn<QStringList>("steps");
        for (const char* store : {"memory", "redis"}) {
            auto row = [&](const char* tag, const char* config, int flags, QStringList steps) {
                QTest::addRow("%s: %s", store, tag) << store << config << flags << steps;
            };
            const char* C = kCountingConfig;
            row("S1 basic", C, 0,
                {"1234: domain*4 key=value => OK | OK 10/second rem 6 reset 1",
                 "1234.5: domain key=value => OK | OK 10/second rem 5 reset 1"});
            row("S2 no rule, then over with a descriptor's own addend", C, 0,
                {"1234: domain key2=value2,subkey2=subvalue2+10 => OK | OK 10/minute rem 0 reset "
                 "26",
                 "1234: domain key2=value2+0 ; key2=value2,subkey2=subvalue2+1 => OVER | OK | "
                 "OVER 10/minute rem 0 reset 26"});
            row("S3 a check with addend 0 over the limit", C, 0,
                {"1000000: domain key3=value3+10 => OK | OK 10/hour rem 0 reset 800",
                 "1000000: domain key3=value3+0 => OK | OK 10/hour rem 0 reset 800",
                 "1000000: domain key3=value3 => OVER | OVER 10/hour rem 0 reset 800",
                 "1000000: domain key3=value3+0 => OVER | OVER 10/hour rem 0 reset 800",
                 "1000000: domain key3=value3,subkey3=subvalue3+10 => OK | OK 10/day rem 0 reset "
                 "36800",
                 "1000000: domain key3=value3+0 ; key3=value3,subkey3=subvalue3+1 => OVER | OVER "
                 "10/hour rem 0 reset 800 | OVER 10/day rem 0 reset 36800"});
            row("S4 towards the limit and past it", C, 0,
                {"1000000: domain key4=value4+10 => OK | OK 15/hour rem 5 reset 800",
                 "1000000: domain key4=value4 => OK | OK 15/hour rem 4 reset 800",
                 "1000000: domain key4=value4+2 => OK | OK 15/hour rem 2 reset 800",
                 "1000000: domain key4=value4+3 => OVER | OVER 15/hour rem 0 reset 800",
                 "1000000: domain key4=value4 => OVER | OVER 15/hour rem 0 reset 800"});
            row("S5 addend 3 under near", C, 0,
                {"1234: domain s20=a+2 => OK | OK 20/second rem 18 reset 1",
                 "1234: domain*3 s20=a => OK | OK 20/second rem 15 reset 1"});
            row("S6 addend 2 partly near", C, 0,
                {"1234: domain s8=a+5 => OK | OK 8/second rem 3 reset 1",
                 "1234: domain*2 s8=a => OK | OK 8/second rem 1 reset 1"});
            row("S7 addend 3 all near", C, 0,
                {"1234: domain s20=a+16 => OK | OK 20/second rem 4 reset 1",
                 "1234: domain*3 s20=a => OK | OK 20/second rem 1 reset 1"});
            row("S8 addend 3 partly over", C, 0,
                {"1234: domain s20=a+19 => OK | OK 20/second rem 1 reset 1",
                 "1234: domain*3 s20=a => OVER | OVER 20/second rem 0 reset 1"});
            row("S9 addend 7 across the three zones", C, 0,
                {"1234: domain s20=a+15 => OK | OK 20/second rem 5 reset 1",
                 "1234: domain*7 s20=a => OVER | OVER 20/second rem 0 reset 1"});
            row("S10 addend 3 all over", C, 0,
                {"1234: domain s10=a+10 => OK | OK 10/second rem 0 reset 1",
                 "1234: domain*3 s10=a => OVER | OVER 10/second rem 0 reset 1"});
            row("S11 windows on the wall clock", C, 0,
                {"1234.9: domain*10 key=value => OK | OK 10/second rem 0 reset 1",
                 "1234.95: domain key=value => OVER | OVER 10/second rem 0 reset 1",
                 "1235: domain key=value => OK | OK 10/second rem 9 reset 1",
                 "1259: domain m10=a => OK | OK 10/minute rem 9 reset 1",
                 "1259.99: domain*9 m10=a => OK | OK 10/minute rem 0 reset 1",
                 "1260: domain m10=a => OK | OK 10/minute rem 9 reset 60",
                 // A week starts on Thursday 00:00 UTC, a month is 30 days, a year 365, all from
                 // the epoch.
                 "604799: domain*2 week=a => OK | OK 2/week rem 0 reset 1",
                 "604800: domain week=a => OK | OK 2/week rem 1 reset 604800",
                 "2591999: domain*2 month=a => OK | OK 2/month rem 0 reset 1",
                 "2592000: domain month=a => OK | OK 2/month rem 1 reset 2592000"});
            row("S11 a year of 365 days from the epoch", C, 0,
                {"31535999: domain*2 year=a => OK | OK 2/year rem 0 reset 1",
                 "31536000: domain year=a => OK | OK 2/year rem 1 reset 31536000"});
            row("S12 a shadow rule counts and answers OK", C, 0,
                {"1000000: domain shadow4=value4+14 => OK | OK 15/hour rem 1 reset 800",
                 "1000000: domain shadow4=value4 => OK | OK 15/hour rem 0 reset 800",
                 "1000000: domain shadow4=value4 => OK | OK 15/hour rem 0 reset 800",
                 "1000000: domain shadow4=value4+0 => OK | OK 15/hour rem 0 reset 800"});
            row("S13 two descriptors, one over", C, 0,
                {"1000000: domain key4=value4+11 ; key5=value5+11 => OK | OK 15/hour rem 4 reset "
                 "800 | OK 14/hour rem 3 reset 800",
                 "1000000: domain key4=value4+2 ; key5=value5+2 => OK | OK 15/hour rem 2 reset 800 "
                 "| OK 14/hour rem 1 reset 800",
                 "1000000: domain key4=value4+2 ; key5=value5+2 => OVER | OK 15/hour rem 0 reset "
                 "800 | OVER 14/hour rem 0 reset 800"});
            row("S14 over-limit arithmetic", C, 0,
                {"5: domain s5=a+2 => OK | OK 5/second rem 3 reset 1",
                 "5: domain s5=a+5 => OVER | OVER 5/second rem 0 reset 1",
                 "5: domain shadow5=a+2 => OK | OK 5/second rem 3 reset 1",
                 "5: domain shadow5=a+5 => OK | OK 5/second rem 0 reset 1",
                 "5: domain s10=a+2 => OK | OK 10/second rem 8 reset 1",
                 "5: domain s10=a+4 => OK | OK 10/second rem 4 reset 1"});
            const char* S = kServiceConfig;
            row("S15 no rule, then a rule over", S, 0,
                {"1: test-domain hello=world => OK | OK",
                 "1: different-domain foo=bar+10 => OK | OK 10/minute/key_name rem 0 reset 59",
                 "1: different-domain foo=bar ; hello=world => OVER | OVER 10/minute/key_name rem "
                 "0 reset 59 | OK",
                 "1: different-domain hello=world ; foo=bar => OVER | OK | OVER "
                 "10/minute/key_name rem 0 reset 59"});
            row("S16 global shadow mode", S, kGlobalShadow,
                {"1: different-domain foo=bar+10 => OK | OK 10/minute/key_name rem 0 reset 59",
                 "1: different-domain foo=bar ; hello=world => OK | OVER 10/minute/key_name rem 0 "
                 "reset 59 | OK"});
            row("S17 shadow and regular rules over", S, 0,
                {"1: different-domain shadowed=a ; regular=a => OK | OK 1/minute rem 0 reset 59 | "
                 "OK 1/minute rem 0 reset 59",
                 "1: different-domain shadowed=a => OK | OK 1/minute rem 0 reset 59",
                 "1: different-domain shadowed=a ; regular=a => OVER | OK 1/minute rem 0 reset 59 "
                 "| OVER 1/minute rem 0 reset 59"});
            row("S18 unlimited is never counted", S, 0,
                {"60: different-domain foo=bar ; hello=world ; baz=qux => OK | OK "
                 "10/minute/key_name rem 9 reset 60 | OK | OK unlimited",
                 "x20 60: different-domain baz=qux => OK | OK unlimited"});
            row("S19 calls refused", S, 0,
                {"1: '' foo=bar => ERROR rate limit domain must not be empty",
                 "1: different-domain => ERROR rate limit descriptor list must not be empty",
                 "1: different-domain foo=bar+9007199254740992 => ERROR hits_addend "
                 "9007199254740992 of descriptor 0 is more than a counter holds (at most "
                 "9007199254740991)",
                 "1: different-domain*9007199254740991 foo=bar => OVER | OVER 10/minute/key_name "
                 "rem 0 reset 59"});
            row("S20 quota mode", S, 0,
                {"1: different-domain regular=a ; quota1=a => OK | OK 1/minute rem 0 reset 59 | OK "
                 "1/minute rem 0 reset 59",
                 // regular over, quota ok: over
                 "1: different-domain regular=a ; quota2=a => OVER | OVER 1/minute rem 0 reset 59 "
                 "| OK 1/minute rem 0 reset 59",
                 "61: different-domain regular=a ; quota1=a => OK | OK 1/minute rem 0 reset 59 | "
                 "OK "
                 "1/minute rem 0 reset 59",
                 // the only quota descriptor over: over
                 "61: different-domain regular=b ; quota1=a => OVER | OK 1/minute rem 0 reset 59 | "
                 "OVER 1/minute rem 0 reset 59",
                 // one quota of two over: ok; both over: over
                 "61: different-domain quota1=a ; quota2=b => OK | OVER 1/minute rem 0 reset 59 | "
                 "OK 1/minute rem 0 reset 59",
                 "61: different-domain quota1=a ; quota2=b => OVER | OVER 1/minute rem 0 reset 59 "
                 "| OVER 1/minute rem 0 reset 59"});
            row("S20 global quota mode", S, kGlobalQuota,
                {"1: different-domain regular=a ; foo=bar+10 => OK | OK 1/minute rem 0 reset 59 | "
                 "OK 10/minute/key_name rem 0 reset 59",
                 "1: different-domain regular=a ; foo=bar => OVER | OVER 1/minute rem 0 reset 59 | "
                 "OVER 10/minute/key_name rem 0 reset 59",
                 // a descriptor no rule matches is a quota that passed
                 "1: different-domain regular=a ; hello=world => OK | OVER 1/minute rem 0 reset 59 "
                 "| OK"});
            row("S20 global shadow with quotas over", S, kGlobalShadow,
                {"1: different-domain quota1=a+2 ; quota2=a+2 => OK | OVER 1/minute rem 0 reset "
                 "59 | OVER 1/minute rem 0 reset 59",
                 "1: different-domain regular=a+2 ; quota1=b+2 => OK | OVER 1/minute rem 0 reset "
                 "59 | OVER 1/minute rem 0 reset 59"});
            const char* E = kExampleConfig;
            const QString d1 = "rl foo=%1,bar=%2";
            const QString banned = "rl foo=bkthomps,bar=banned";
            const QString myFoo = "foo=my_foo,bar=bkthomps";
            const QString fake = "source_cluster=proxy,destination_cluster=fake";
            row("S22 replaces", E, 0,
                {"60: " + banned + " => OVER | OVER 0/minute/banned_limit rem 0 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=mock => OVER | "
                     "OVER 0/minute/banned_limit rem 0 reset 60 | OK 1/minute rem 0 "
                     "reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OK | "
                     "OK | OK 2/minute rem 1 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OK | "
                     "OK | OK 2/minute rem 0 reset 60",
                 "60: " + banned +
                     " ; source_cluster=proxy,destination_cluster=override => OVER "
                     "| OK | OVER 2/minute rem 0 reset 60",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=bkthomps => OK "
                     "| OK | OK 2/minute rem 1 reset 60",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=bkthomps => OK "
                     "| OK | OK 2/minute rem 0 reset 60",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=bkthomps => "
                     "OVER | OK | OVER 2/minute rem 0 reset 60",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=not_bkthomps => "
                     "OK | OK 1/minute/bkthomps rem 0 reset 60 | OK",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=not_bkthomps => "
                     "OVER | OVER 1/minute/bkthomps rem 0 reset 60 | OK",
                 "60: rl " + myFoo +
                     " ; source_cluster=proxy,destination_cluster=bkthomps => "
                     "OVER | OK | OVER 2/minute rem 0 reset 60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OK | OK | OK | OK "
                     "4/minute rem 3 reset 60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OK | OK | OK | OK "
                     "4/minute rem 2 reset 60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OK | OK | OK | OK "
                     "4/minute rem 1 reset 60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OK | OK | OK | OK "
                     "4/minute rem 0 reset 60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OVER | OK | OK | OVER "
                     "4/minute rem 0 reset 60",
                 "60: " + d1.arg("foo_2", "bkthomps") +
                     " => OK | OK 1/minute/bkthomps rem 0 reset 60",
                 "60: " + d1.arg("foo_2", "bkthomps") +
                     " => OVER | OVER 1/minute/bkthomps rem 0 reset 60",
                 "60: " + d1.arg("foo_3", "bar_3") + " ; " + fake +
                     " => OK | OK 3/minute rem 2 reset 60 | OK 2/minute/fake_name rem 1 reset 60",
                 "60: " + d1.arg("foo_3", "bar_3") + " ; " + fake +
                     " => OK | OK 3/minute rem 1 reset 60 | OK 2/minute/fake_name rem 0 reset 60",
                 "60: " + d1.arg("foo_3", "bar_3") + " ; " + fake +
                     " => OVER | OK 3/minute rem 0 reset 60 | OVER 2/minute/fake_name rem 0 reset "
                     "60",
                 "60: rl " + myFoo + " ; " + fake +
                     " ; category=account => OVER | OK | OK | OVER "
                     "4/minute rem 0 reset 60"});
            const char* W = kWildcardConfig;
            QStringList s23 = {"3600: foo hello=world => OK | OK",
                               "3600: another key1=foo => OK | OK 50/second rem 49 reset 1"};
            s23 += generated(0, 25, [](int i) {
                return i < 20 ? QString("3600: another key2=r => OK | OK 20/minute rem %1 reset 60")
                                    .arg(19 - i)
                              : QString(
                                    "3600: another key2=r => OVER | OVER 20/minute rem 0 "
                                    "reset 60");
            });
            s23 += generated(0, 15, [](int i) {
                return QString(
                           "3600: another key2=r2 ; key3=r2 => %1 | OK 20/minute rem %2 reset "
                           "60 | %3 10/hour rem %4 reset 3600")
                    .arg(i < 10 ? "OK" : "OVER")
                    .arg(19 - i)
                    .arg(i < 10 ? "OK" : "OVER")
                    .arg(i < 10 ? 9 - i : 0);
            });
            s23 << "3602: another key3=r3 => OK | OK 10/hour rem 9 reset 3598";
            row("S23 counting per value", W, 0, s23);
            QStringList s25 = generated(0, 10, [](int i) {
                return QString(
                           "7200: share-threshold-test files=files/a%1.pdf => OK | OK 10/hour "
                           "rem %2 reset 3600")
                    .arg(i)
                    .arg(9 - i);
            });
            s25 << "7200: share-threshold-test files=files/b.csv => OVER | OVER 10/hour rem 0 "
                   "reset "
                   "3600";
            s25 += generated(0, 10, [](int i) {
                return QString(
                           "7200: share-threshold-test files_no_share=files_no_share/%1 => OK "
                           "| OK 10/hour rem 9 reset 3600")
                    .arg(i);
            });
            row("S25 share_threshold", W, 0, s25);
            const QString quota = "rl service=service_1 ; service=service_2";
            row("S26 quota descriptors of one call", E, 0,
                {"120: " + quota +
                     " => OK | OK 1/minute rem 0 reset 60 | OK 2/minute rem 1 reset 60",
                 "120: " + quota +
                     " => OK | OVER 1/minute rem 0 reset 60 | OK 2/minute rem 0 reset 60",
                 "120: " + quota +
                     " => OVER | OVER 1/minute rem 0 reset 60 | OVER 2/minute rem 0 "
                     "reset 60"});
            row("S27 a token quota: a check, then the charge", E, 0,
                {"120: rl service=service_2+0 => OK | OK 2/minute rem 2 reset 60",
                 "120: rl service=service_2+1 => OK | OK 2/minute rem 1 reset 60",
                 "120: rl service=service_2+0 => OK | OK 2/minute rem 1 reset 60",
                 "120: rl service=service_2+1 => OK | OK 2/minute rem 0 reset 60",
                 "120: rl service=service_2+0 => OK | OK 2/minute rem 0 reset 60",
                 "120: rl service=service_2+1 => OVER | OVER 2/minute rem 0 reset 60",
                 "120: rl service=service_2+0 => OVER | OVER 2/minute rem 0 reset 60"});
            row("S28 shadow through the example", E, 0,
                {"180: rl foo=pelle,baz=shady => OK | OK 3/minute rem 2 reset 60",
                 "180: rl foo=pelle,baz=shady => OK | OK 3/minute rem 1 reset 60",
                 "x3 180: rl foo=pelle,baz=shady => OK | OK 3/minute rem 0 reset 60",
                 "180: rl foo=pelle,baz=not-so-shady => OK | OK 3/minute rem 2 reset 60",
                 "180: rl foo=pelle,baz=not-so-shady => OK | OK 3/minute rem 1 reset 60",
                 "180: rl foo=pelle,baz=not-so-shady => OK | OK 3/minute rem 0 reset 60",
                 "180: rl foo=pelle,baz=not-so-shady => OVER | OVER 3/minute rem 0 reset 60"});
            row("S29 detailed metric", E, 0,
                {"240: rl unspec=unspecified_value => OK | OK 2/minute rem 1 reset 60",
                 "240: rl unspec=unspecified_value => OK | OK 2/minute rem 0 reset 60",
                 "240: rl unspec=unspecified_value => OVER | OVER 2/minute rem 0 reset 60"});
            const char* B = kBasicConfig;
            row("S30 lookups", B, 0,
                {"10: test-domain key1=something => OK | OK",
                 "10: test-domain key1=value1 => OK | OK",
                 "10: test-domain key1=value1,subkey1=something => OK | OK 5/second rem 4 reset 1",
                 "10: test-domain key1=value1,subkey1=subvalue1 => OK | OK 10/second rem 9 reset 1",
                 "10: test-domain key2=something => OK | OK 20/minute rem 19 reset 50",
                 "10: test-domain key2=value2 => OK | OK 30/minute rem 29 reset 50",
                 "10: test-domain key2=value3 => OK | OK",
                 "10: test-domain key3=foo => OK | OK 1/hour rem 0 reset 3590",
                 "10: test-domain key4=foo => OK | OK 1/day/key4_rate_limit rem 0 reset 86390",
                 "10: test-domain key6=foo => OK | OK unlimited",
                 "10: test-domain key7=unspecified_value => OK | OK 70/minute rem 69 reset 50",
                 "10: foo_domain key1=value1 => OK | OK",
                 // depth: longer than the branch, or a branch without the child
                 "10: test-domain key2=value2,subkey=subvalue => OK | OK",
                 "10: test-domain key5=value5,subkey5=subvalue => OK | OK",
                 "10: test-domain key5=value5,subkey5=subvalue5 => OK | OK 5/second rem 4 reset 1",
                 "10: test-domain +1 => OK | OK"});
            row("S31 merged domains", kMergeConfig, kMerge,
                {"10: test-domain key1=value1 => OK | OK 10/minute rem 9 reset 50",
                 "10: test-domain key2=value2 => OK | OK 20/minute rem 19 reset 50"});
            row("wildcards", W, 0,
                {"10: test-domain wild=foo1 => OK | OK 20/minute rem 19 reset 50",
                 "10: test-domain wild=foo2 => OK | OK 20/minute rem 19 reset 50",
                 "10: test-domain wild=bar => OK | OK",
                 "10: test-domain midWild=bar123b => OK | OK 30/minute rem 29 reset 50",
                 "10: test-domain midWild=barb => OK | OK 30/minute rem 29 reset 50",
                 "10: test-domain midWild=bara => OK | OK",
                 "10: test-domain file=test1 => OK | OK 50/minute rem 49 reset 50",
                 "10: test-domain file=test23 => OK | OK 100/minute rem 99 reset 50",
                 "10: test-domain file=other => OK | OK 7/minute rem 6 reset 50",
                 "10: test-domain nestedWild=val1,wild=goo2 => OK | OK 3/minute rem 2 reset 50",
                 // the request ends above the tree's leaves: the node's own rule
                 "10: test-domain key-1=value-1 => OK | OK 100/minute rem 99 reset 50",
                 "10: test-domain key-1=value-1,key-2=value-2 => OK | OK 5/minute rem 4 reset 50",
                 // no backtracking: the exact node has no "other" child, the key alone has
                 "10: test-domain exact=one,other=x => OK | OK",
                 "10: test-domain exact=two,other=x => OK | OK 6/minute rem 5 reset 50"});
            // Where ratelab differs on purpose: a hit above the whole limit is refused and not
            // counted (the engine's fixed window), so the window stays open for smaller ones.
            row("divergence: a hit above the limit", C, 0,
                {"1234: domain key=value+11 => OVER | OVER 10/second rem 0 reset 1",
                 "1234: domain key=value+0 => OK | OK 10/second rem 10 reset 1"});
        }
    }
    void sequences() {
        QFETCH(QString, store);
        QFETCH(QString, config);
        QFETCH(int, flags);
        QFETCH(QStringList, steps);
        RlsDeciderOptions options;
        options.globalShadowMode = flags & kGlobalShadow;
        options.globalQuotaMode = flags & kGlobalQuota;
        const QByteArray text = config.toUtf8();
        RlsDecider decider(loadConfig(text.constData(), flags & kMerge), storeFor(store), options);
        const QString mismatch = runSteps(decider, steps);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }

    // A batch decides as the same calls one by one would, each step's repeats in one batch.
    void batches_data() { sequences_data(); }
    void batches() {
        QFETCH(QString, store);
        QFETCH(QString, config);
        QFETCH(int, flags);
        QFETCH(QStringList, steps);
        RlsDeciderOptions options;
        options.globalShadowMode = flags & kGlobalShadow;
        options.globalQuotaMode = flags & kGlobalQuota;
        const QByteArray text = config.toUtf8();
        RlsDecider decider(loadConfig(text.constData(), flags & kMerge), storeFor(store), options);
        const QString mismatch = runSteps(decider, steps, true);
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    }
};

QTEST_APPLESS_MAIN(TestRlsSequences)
#include "tst_rls_sequences.moc"
