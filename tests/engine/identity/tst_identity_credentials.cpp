// Raw credentials never leave the request: not in keys, scopes, verdict headers or bodies, nor
// in the events the observer receives, nor in the JSON-lines log built from them.

#include <QtTest>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ratelab/json_log_observer.h"
#include "ratelab/limiter.h"
#include "ratelab/memory_store.h"

using namespace ratelab;

namespace {

constexpr const char* kSecret = "s3cr3t-Token-VALUE-4242";
constexpr const char* kApiKey = "ak_live_SECRET_9f8e7d";
constexpr const char* kAccount = "victim@example.com";

// Keeps a copy of every text field of every event, and passes each event on to the JSON-lines
// log a service would run, whose lines it keeps too.
class RecordingObserver : public LimitObserver {
public:
    RecordingObserver() : log_([this](std::string_view line) { lines.emplace_back(line); }, 1000) {}

    void onLimitHit(const LimitEvent& e) override {
        log_.onLimitHit(e);
        std::lock_guard lock(mutex_);
        texts.emplace_back(e.policy);
        texts.emplace_back(e.route);
        texts.emplace_back(e.keyHash);
        ++hits;
    }
    void onStoreError(const StoreErrorEvent& e) override {
        log_.onStoreError(e);
        std::lock_guard lock(mutex_);
        ++storeErrors;
        texts.emplace_back(e.policy);
        texts.emplace_back(e.route);
        texts.emplace_back(e.keyHash);
        texts.emplace_back(e.error);
    }
    std::vector<std::string> texts;
    std::vector<std::string> lines;  ///< the JSON-lines log (its sink is called under its lock)
    int hits = 0;
    int storeErrors = 0;

private:
    JsonLogObserver log_;
    std::mutex mutex_;
};

// A store whose server is gone: every call is a transport error.
class UnreachableStore : public Store {
public:
    ConsumeResult consume(const ConsumeRequest&) override {
        ConsumeResult r;
        r.status = StoreStatus::Transport;
        r.error = "connection refused";
        return r;
    }
    KeyspaceStats keyspace() const override { return {}; }
    std::string_view kind() const override { return "unreachable"; }
};

Policy policyNamed(const char* name, KeySource source) {
    Policy p;
    p.name = name;
    p.capacity = 1;
    p.refillPerSecond = 0.5;
    p.key.source = source;
    p.budget.perPeer = 2;
    return p;
}

PolicySet everySource() {
    PolicySet set;
    set.policies.push_back(policyNamed("default", KeySource::Default));
    Policy header = policyNamed("api-key", KeySource::Header);
    header.key.header = "x-api-key";
    set.policies.push_back(header);
    Policy composite = policyNamed("login", KeySource::Composite);
    composite.key.parts = {{KeyPart::Kind::Route, ""},
                           {KeyPart::Kind::Header, "x-account"},
                           {KeyPart::Kind::Header, "authorization"}};
    set.policies.push_back(composite);
    Policy shadow = policyNamed("shadow", KeySource::Default);
    shadow.mode = PolicyMode::Shadow;
    set.policies.push_back(shadow);
    Policy legacy = policyNamed("legacy", KeySource::Default);
    legacy.headers = HeaderStyle::Legacy;
    legacy.budget.enabled = false;
    set.policies.push_back(legacy);
    return set;
}

bool leaks(std::string_view text) {
    for (std::string_view secret :
         {std::string_view(kSecret), std::string_view(kApiKey), std::string_view(kAccount)}) {
        if (text.find(secret) != std::string_view::npos) return true;
    }
    return false;
}

}  // namespace

class TestIdentityCredentials : public QObject {
    Q_OBJECT

private slots:
    void noRawCredentialInAnyOutput_data() {
        QTest::addColumn<bool>("storeReachable");
        QTest::newRow("memory store") << true;
        QTest::newRow("store unreachable") << false;
    }
    void noRawCredentialInAnyOutput() {
        QFETCH(bool, storeReachable);
        RecordingObserver observer;
        LimiterOptions options;
        options.observer = &observer;
        MemoryStoreOptions storeOptions;
        storeOptions.hashSeed = 3;
        std::shared_ptr<Store> store;
        if (storeReachable) {
            store = makeMemoryStore(storeOptions);
        } else {
            store = std::make_shared<UnreachableStore>();
        }
        Limiter limiter(everySource(), store, options);

        IpAddress peer = *IpAddress::parse("198.51.100.7");
        Verdict verdict;
        int checked = 0;
        // Several variants of each credential, repeated so buckets empty, budgets overflow
        // and every policy reports hits (or, unreachable, store errors).
        for (int round = 0; round < 4; ++round) {
            for (int variant = 0; variant < 5; ++variant) {
                std::string suffix = variant == 0 ? "" : "-" + std::to_string(variant);
                std::string authorization = std::string("Bearer ") + kSecret + suffix;
                std::string apiKey = kApiKey + suffix;
                Header headers[] = {{"Authorization", authorization},
                                    {"X-Api-Key", apiKey},
                                    {"X-Account", kAccount}};
                RequestView request;
                request.method = "POST";
                request.path = "/login";
                request.headers = headers;
                request.peer = variant % 2 ? &peer : nullptr;
                for (bool explain : {false, true}) {
                    limiter.decide(request, (1000 + round) * kNanosPerSecond, verdict, explain);
                    for (const HttpHeader& h : verdict.headers) {
                        QVERIFY2(!leaks(h.name) && !leaks(h.value), h.value.c_str());
                    }
                    QVERIFY2(!leaks(verdict.body), verdict.body.c_str());
                    for (const PolicyResult& r : verdict.check.policies()) {
                        QVERIFY2(!leaks(r.key), r.key.c_str());
                        QVERIFY2(!leaks(r.scope), r.scope.c_str());
                        if (explain) QVERIFY(!r.key.empty());
                    }
                    ++checked;
                }
            }
        }
        QCOMPARE(checked, 40);
        // Every refusal or store failure above was reported and logged, none leaking.
        QVERIFY(storeReachable ? observer.hits > 0 : observer.storeErrors > 0);
        QVERIFY(!observer.lines.empty());
        for (const std::string& text : observer.texts)
            QVERIFY2(!leaks(text), text.c_str());
        for (const std::string& line : observer.lines)
            QVERIFY2(!leaks(line), line.c_str());
    }
};

QTEST_APPLESS_MAIN(TestIdentityCredentials)
#include "tst_identity_credentials.moc"
