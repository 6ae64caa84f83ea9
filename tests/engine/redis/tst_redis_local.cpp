// on_store_error "local" against a real redis-server: the drill. Four replicas share Redis; the
// server stalls (SIGSTOP), then dies and comes back empty (SIGKILL, restart). While it is
// unreachable each replica admits only its quarter of the limit on its own memory, legitimate
// clients keep passing, and once the server answers again decisions return to it.

#include <chrono>
#include <map>
#include <string>

#include <QtTest>

#include "fixtures/limiter_fixture.h"
#include "fixtures/redis_store_fixture.h"

using namespace ratelab;
using namespace ratelab::redistest;
using namespace ratelab::testing;

namespace {

struct Counted {
    int allowed = 0;
    int local = 0;
    int shared = 0;                       // decided by Redis (passed or throttled there)
    std::map<std::string, int> outcomes;  // every outcome, by name, for a failure's message

    std::string describe() const {
        std::string text = "outcomes:";
        for (const auto& [name, count] : outcomes)
            text += " " + name + " " + std::to_string(count);
        return text;
    }
};

// `n` requests from `client` spread over the replicas in turn, all at `now`.
Counted send(std::vector<std::unique_ptr<Limiter>>& replicas, const char* client, int n,
             Nanos now) {
    Counted c;
    TestRequest request;
    request.from(client);
    Check check;
    for (int i = 0; i < n; ++i) {
        replicas[static_cast<std::size_t>(i) % replicas.size()]->check(request.view(), now, check);
        c.allowed += check.allowed;
        const PolicyOutcome o = check.policies()[0].outcome;
        c.local += o == PolicyOutcome::DecidedLocally;
        c.shared += o == PolicyOutcome::Passed || o == PolicyOutcome::Throttled;
        c.outcomes[std::string(policyOutcomeName(o))] += 1;
    }
    return c;
}

}  // namespace

class TestRedisLocal : public RedisSuite {
    Q_OBJECT

private slots:
    void outageIsDecidedLocallyAndRecovers() {
        // 20 at once, refilled at 1 per second; four replicas: 5 at once each while Redis is
        // unreachable.
        Policy p = tokenBucketPolicy("api", 20, 1.0);
        p.onStoreError = StoreErrorRule::Local;
        p.storeTimeout = 150 * kNanosPerMilli;
        PolicySet set = policySet({p});
        set.store.kind = StoreConfig::Kind::Redis;
        set.store.replicas = 4;
        RedisStoreOptions options;
        options.timeout = 150 * kNanosPerMilli;
        options.connectTimeout = 150 * kNanosPerMilli;
        options.reconnectBackoffMin = kNanosPerMilli;
        options.reconnectBackoffMax = 20 * kNanosPerMilli;
        std::vector<std::unique_ptr<Limiter>> replicas;
        for (int r = 0; r < 4; ++r) {
            std::shared_ptr<Store> store = callerTimeStore({server_.url()}, "drill", options);
            replicas.push_back(std::make_unique<Limiter>(set, store));
        }
        Nanos now = kEpoch;

        // Healthy: the shared bucket holds 20 for everyone.
        Counted before = send(replicas, "203.0.113.7", 30, now);
        QCOMPARE(before.allowed, 20);
        QCOMPARE(before.shared, 30);

        // Stalled: calls time out, then fail fast while the client backs off. Each replica
        // admits its fresh local share of 5, whatever the attacker sends.
        server_.pause();
        now += kNanosPerSecond;
        Counted stalled = send(replicas, "203.0.113.7", 200, now);
        // Failed twice in gate runs, never alone: say what the requests got instead, and whether
        // the server was still stopped.
        QVERIFY2(stalled.local == 200,
                 (stalled.describe() + "; redis-server state " + server_.processState()).c_str());
        QCOMPARE(stalled.allowed, 4 * 5);
        // A legitimate client elsewhere passes on the local stores too.
        Counted user = send(replicas, "198.51.100.1", 4, now);
        QCOMPARE(user.allowed, 4);
        QCOMPARE(user.local, 4);

        // Dead, and back empty: while it is down the local limits still hold (one more second
        // refills a quarter token per replica: nothing new for the attacker)...
        server_.kill();
        now += kNanosPerSecond;
        Counted dead = send(replicas, "203.0.113.7", 100, now);
        QCOMPARE(dead.local, 100);
        QCOMPARE(dead.allowed, 0);
        std::string error;
        QVERIFY2(server_.restart(&error), error.c_str());

        // ...and once the server answers, every replica decides on it again: its bucket for
        // the attacker starts fresh (the restart lost the data), 20 at once.
        now += kNanosPerSecond;
        // The clients reconnect on their own wall-clock backoff, so the wait for them is bounded
        // in wall time (a count of attempts ran out on a loaded machine before they were back).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        int recovered = 0;
        while (recovered < 4 && std::chrono::steady_clock::now() < deadline) {
            recovered = 0;
            TestRequest probe;
            probe.from("192.0.2.99");
            Check check;
            for (auto& replica : replicas) {
                replica->check(probe.view(), now, check);
                // Answered by the shared store, whatever it said: the probes of the replicas
                // already back use up the probe's shared bucket (20) while the wait goes on,
                // so a replica that comes back later is throttled there, not passed.
                const PolicyOutcome o = check.policies()[0].outcome;
                recovered += o == PolicyOutcome::Passed || o == PolicyOutcome::Throttled;
            }
        }
        QCOMPARE(recovered, 4);
        Counted after = send(replicas, "203.0.113.7", 30, now);
        QCOMPARE(after.shared, 30);
        QCOMPARE(after.local, 0);
        QCOMPARE(after.allowed, 20);
    }
};

QTEST_APPLESS_MAIN(TestRedisLocal)
#include "tst_redis_local.moc"
