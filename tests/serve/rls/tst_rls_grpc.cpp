// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit through a real grpc++ client on
// loopback, against `serve`'s gRPC listener: call sequences as Envoy sends them, with the wall
// clock injected where windows matter, and the refusals of requests that cannot be decided.
// The configurations are envoyproxy/ratelimit's YAML and the answers the original's (the
// decider's exhaustive tables are tst_rls_sequences'); here the point is that the transport
// carries every field each way: codes, limits, units, remaining hits, the Duration to the
// reset, headers, per-descriptor and per-request hits, errors with their messages.

#include <google/protobuf/wrappers.pb.h>

#include <QtTest>

#include "fixtures/rls_fixture.h"

using namespace ratelab;
using namespace ratelab::testing;

namespace {

const RlsFiles kConfig = {{"rl.yaml", R"(domain: rl
descriptors:
  - key: key1
    value: value1
    rate_limit: {unit: second, requests_per_unit: 3, name: first}
  - key: key2
    value: value2
    rate_limit: {unit: minute, requests_per_unit: 10}
    descriptors:
      - key: sub
        value: a
        rate_limit: {unit: minute, requests_per_unit: 2, name: nested}
  - key: shadowed
    value: s
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: hours
    value: h
    rate_limit: {unit: hour, requests_per_unit: 15}
)"},
                          {"other.yaml", R"(domain: other
descriptors:
  - key: k
    value: v
    rate_limit: {unit: day, requests_per_unit: 5}
)"}};

using Descriptors = std::vector<std::vector<std::pair<std::string, std::string>>>;

}  // namespace

class TestRlsGrpc : public QObject {
    Q_OBJECT

private slots:
    void init() {
        server_ = std::make_unique<RlsSidecarUnderTest>(kConfig);
        QVERIFY2(server_->sidecar, server_->error.c_str());
        client_ = std::make_unique<RlsClient>(server_->port());
    }
    void cleanup() {
        client_.reset();
        server_.reset();
    }

    // Every field of a counted status arrives: code, limit (requests, unit, name), remaining
    // hits, the time to the window's end as a Duration; and the answer's headers.
    void aCountedStatusCarriesItsLimit() {
        const auto a = client_->ask("rl", {{{"key1", "value1"}}});
        QVERIFY2(a.status.ok(), a.status.error_message().c_str());
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
        QCOMPARE(a.response.statuses_size(), 1);
        const auto& s = a.response.statuses(0);
        QCOMPARE(s.code(), rlsv3::RateLimitResponse::OK);
        QVERIFY(s.has_current_limit());
        QCOMPARE(s.current_limit().requests_per_unit(), 3u);
        QCOMPARE(s.current_limit().unit(), rlsv3::RateLimitResponse::RateLimit::SECOND);
        QCOMPARE(s.current_limit().name(), std::string("first"));
        QCOMPARE(s.limit_remaining(), 2u);
        QVERIFY(s.has_duration_until_reset());
        QCOMPARE(s.duration_until_reset().seconds(), std::int64_t(1));
        QCOMPARE(s.duration_until_reset().nanos(), 0);
        // The IETF fields of the limit, in response_headers_to_add for Envoy to pass on.
        QCOMPARE(a.response.response_headers_to_add_size(), 2);
        QCOMPARE(a.response.response_headers_to_add(0).key(), std::string("RateLimit-Policy"));
        QCOMPARE(a.response.response_headers_to_add(0).value(), std::string("\"first\";q=3;w=1"));
        QCOMPARE(a.response.response_headers_to_add(1).key(), std::string("RateLimit"));
        QCOMPARE(a.response.response_headers_to_add(1).value(), std::string("\"first\";r=2;t=1"));
    }

    // 3 a second: remaining 2, 1, 0, then OVER_LIMIT with 0 and the limit still named; the
    // next second starts a new window.
    void aWindowFillsThenResets() {
        for (std::uint32_t expected : {2u, 1u, 0u}) {
            const auto a = client_->ask("rl", {{{"key1", "value1"}}});
            QVERIFY(a.status.ok());
            QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
            QCOMPARE(a.response.statuses(0).limit_remaining(), expected);
        }
        auto over = client_->ask("rl", {{{"key1", "value1"}}});
        QVERIFY(over.status.ok());
        QCOMPARE(over.response.overall_code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(over.response.statuses(0).code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(over.response.statuses(0).limit_remaining(), 0u);
        QCOMPARE(over.response.statuses(0).current_limit().requests_per_unit(), 3u);
        const auto& headers = over.response.response_headers_to_add();
        QCOMPARE(headers.size(), 3);
        QCOMPARE(headers.at(2).key(), std::string("Retry-After"));
        QCOMPARE(headers.at(2).value(), std::string("1"));

        server_->clock.advance(kNanosPerSecond);
        const auto next = client_->ask("rl", {{{"key1", "value1"}}});
        QCOMPARE(next.response.overall_code(), rlsv3::RateLimitResponse::OK);
        QCOMPARE(next.response.statuses(0).limit_remaining(), 2u);
    }

    // At Unix time 1,000,000 s: a minute ends in 20 s, an hour in 800 s, a day in 36,800 s
    // (the original's figures); half a second later the minute has 19.5 s left.
    void durationUntilResetPerUnit_data() {
        QTest::addColumn<QString>("domain");
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<int>("unit");
        QTest::addColumn<qint64>("seconds");
        QTest::newRow("minute") << "rl"
                                << "key2"
                                << "value2" << int(rlsv3::RateLimitResponse::RateLimit::MINUTE)
                                << qint64(20);
        QTest::newRow("hour") << "rl"
                              << "hours"
                              << "h" << int(rlsv3::RateLimitResponse::RateLimit::HOUR)
                              << qint64(800);
        QTest::newRow("day") << "other"
                             << "k"
                             << "v" << int(rlsv3::RateLimitResponse::RateLimit::DAY)
                             << qint64(36800);
    }
    void durationUntilResetPerUnit() {
        QFETCH(QString, domain);
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(int, unit);
        QFETCH(qint64, seconds);
        const auto a =
            client_->ask(domain.toStdString(), {{{key.toStdString(), value.toStdString()}}});
        QVERIFY(a.status.ok());
        QCOMPARE(int(a.response.statuses(0).current_limit().unit()), unit);
        QCOMPARE(a.response.statuses(0).duration_until_reset().seconds(), seconds);
    }
    // The request's hits_addend charges every descriptor that has none of its own; 0 means 1.
    void requestHitsAddend() {
        auto a = client_->ask("rl", {{{"key1", "value1"}}}, 2);
        QCOMPARE(a.response.statuses(0).limit_remaining(), 1u);
        a = client_->ask("rl", {{{"key1", "value1"}}}, 0);
        QCOMPARE(a.response.statuses(0).limit_remaining(), 0u);
        a = client_->ask("rl", {{{"key1", "value1"}}}, 2);
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OVER_LIMIT);
    }

    // A descriptor's own hits_addend wins over the request's, and an explicit 0 only checks
    // (Envoy's apply_on_stream_done quota pattern): the count does not move.
    void descriptorHitsAddend() {
        auto request = RlsClient::request("rl", {{{"key2", "value2"}}, {{"key1", "value1"}}}, 2);
        request.mutable_descriptors(0)->mutable_hits_addend()->set_value(0);
        for (int i = 0; i < 2; ++i) {
            const auto a = client_->ask(request);
            QVERIFY(a.status.ok());
            QCOMPARE(a.response.statuses(0).limit_remaining(), 10u);  // checked, not charged
        }
        QCOMPARE(client_->ask(request).response.overall_code(),
                 rlsv3::RateLimitResponse::OVER_LIMIT);  // key1: 2 + 2 + 2 > 3
        request.mutable_descriptors(0)->mutable_hits_addend()->set_value(7);
        const auto a = client_->ask(request);
        QCOMPARE(a.response.statuses(0).limit_remaining(), 3u);
    }

    // One status per descriptor, in the request's order; OVER_LIMIT overall when any is over.
    void statusesFollowTheDescriptors() {
        const Descriptors three = {
            {{"key2", "value2"}, {"sub", "a"}}, {{"nothing", "here"}}, {{"key2", "value2"}}};
        for (int i = 0; i < 2; ++i)
            QCOMPARE(client_->ask("rl", three).response.overall_code(),
                     rlsv3::RateLimitResponse::OK);
        const auto a = client_->ask("rl", three);
        QVERIFY(a.status.ok());
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(a.response.statuses_size(), 3);
        QCOMPARE(a.response.statuses(0).code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(a.response.statuses(0).current_limit().name(), std::string("nested"));
        QCOMPARE(a.response.statuses(1).code(), rlsv3::RateLimitResponse::OK);
        QVERIFY(!a.response.statuses(1).has_current_limit());
        QCOMPARE(a.response.statuses(2).code(), rlsv3::RateLimitResponse::OK);
        QCOMPARE(a.response.statuses(2).limit_remaining(), 7u);
    }

    // No rule, or an unknown domain: OK, no limit, 0 remaining, no Duration (the original's
    // answer, which Envoy ignores for its headers).
    void noRuleAnswersOkWithoutALimit_data() {
        QTest::addColumn<QString>("domain");
        QTest::newRow("known domain") << "rl";
        QTest::newRow("unknown domain") << "nowhere";
    }
    void noRuleAnswersOkWithoutALimit() {
        QFETCH(QString, domain);
        const auto a = client_->ask(domain.toStdString(), {{{"hello", "world"}}});
        QVERIFY(a.status.ok());
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
        QCOMPARE(a.response.statuses(0).code(), rlsv3::RateLimitResponse::OK);
        QVERIFY(!a.response.statuses(0).has_current_limit());
        QVERIFY(!a.response.statuses(0).has_duration_until_reset());
        QCOMPARE(a.response.statuses(0).limit_remaining(), 0u);
    }

    // A shadow rule answers OK past its limit (remaining 0, limit still set) while counting.
    void shadowRuleAnswersOk() {
        for (int i = 0; i < 3; ++i) {
            const auto a = client_->ask("rl", {{{"shadowed", "s"}}});
            QVERIFY(a.status.ok());
            QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
            QCOMPARE(a.response.statuses(0).limit_remaining(), 0u);
            QCOMPARE(a.response.statuses(0).current_limit().requests_per_unit(), 1u);
        }
    }

    // Where the original refuses, a gRPC error with its message (UNKNOWN, as grpc-go sends a
    // plain error); the connection stays usable.
    void refusalsCarryTheirMessage_data() {
        QTest::addColumn<QString>("domain");
        QTest::addColumn<bool>("withDescriptor");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty domain") << "" << true << "rate limit domain must not be empty";
        QTest::newRow("no descriptors")
            << "rl" << false << "rate limit descriptor list must not be empty";
    }
    void refusalsCarryTheirMessage() {
        QFETCH(QString, domain);
        QFETCH(bool, withDescriptor);
        QFETCH(QString, message);
        const Descriptors descriptors =
            withDescriptor ? Descriptors{{{"key1", "value1"}}} : Descriptors{};
        const auto a = client_->ask(domain.toStdString(), descriptors);
        QCOMPARE(a.status.error_code(), grpc::StatusCode::UNKNOWN);
        QCOMPARE(QString::fromStdString(a.status.error_message()), message);
        QVERIFY(client_->ask("rl", {{{"key1", "value1"}}}).status.ok());
        QVERIFY(server_->logged("\"event\":\"rls_refused\",\"code\":\"UNKNOWN\""));
    }

    // A limit override is refused by name rather than decided by the configured limit.
    void limitOverrideIsRefused() {
        auto request = RlsClient::request("rl", {{{"key1", "value1"}}});
        request.mutable_descriptors(0)->mutable_limit()->set_requests_per_unit(100);
        const auto a = client_->ask(request);
        QCOMPARE(a.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY(a.status.error_message().find("limit overrides") != std::string::npos);
        QCOMPARE(server_->gate().decided.load(), 0);
    }

    // A message over the size limit is refused before it is read (RESOURCE_EXHAUSTED), without
    // reaching the decider; the next call on the same channel is answered.
    void anOversizedMessageIsRefused() {
        const auto a = client_->ask("rl", {{{"key1", std::string(70'000, 'x')}}});
        QCOMPARE(a.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
        QCOMPARE(server_->gate().decided.load(), 0);
        QVERIFY(client_->ask("rl", {{{"key1", "value1"}}}).status.ok());
    }

    // A hits_addend that would overflow a counter (above 2^53 - 1, a descriptor's own UInt64Value)
    // is refused as INVALID_ARGUMENT before anything is charged; the request's own hits_addend
    // (a uint32) always fits.
    void anOverflowingHitsAddendIsRefused() {
        auto request = RlsClient::request("rl", {{{"key1", "value1"}}});
        request.mutable_descriptors(0)->mutable_hits_addend()->set_value(std::uint64_t(1) << 63);
        const auto a = client_->ask(request);
        QCOMPARE(a.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QCOMPARE(a.status.error_message(),
                 std::string("hits_addend 9223372036854775808 of descriptor 0 is more than a "
                             "counter holds (at most 9007199254740991)"));
        const auto after = client_->ask("rl", {{{"key1", "value1"}}});
        QCOMPARE(after.response.statuses(0).limit_remaining(), 2u);
    }

    // The configuration shipped for Envoy (resources/deploy/envoy/rls/web.yaml) answers the
    // descriptors envoy-rls.yaml's actions build.
    void theShippedEnvoyConfigurationAnswers() {
        QFile file(RATELAB_SOURCE_DIR "/resources/deploy/envoy/rls/web.yaml");
        QVERIFY(file.open(QIODevice::ReadOnly));
        RlsSidecarUnderTest server({{"web.yaml", file.readAll().toStdString()}});
        QVERIFY2(server.sidecar, server.error.c_str());
        RlsClient client(server.port());
        // generic_key + :path: 600 a minute and 10,000 a day; the status is the minute's.
        auto a = client.ask("web", {{{"generic_key", "api"}, {"path", "/api/orders"}}});
        QVERIFY2(a.status.ok(), a.status.error_message().c_str());
        QCOMPARE(a.response.statuses(0).current_limit().requests_per_unit(), 600u);
        QCOMPARE(a.response.statuses(0).limit_remaining(), 599u);
        // remote_address: a token bucket of 40; one /64 is one client.
        for (int i = 0; i < 40; ++i) {
            a = client.ask("web", {{{"remote_address", "2001:db8::" + std::to_string(i + 1)}}});
            QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
        }
        a = client.ask("web", {{{"remote_address", "2001:db8::ffff"}}});
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(a.response.statuses(0).current_limit().requests_per_unit(), 20u);
        a = client.ask("web", {{{"remote_address", "2001:db8:0:1::1"}}});
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
        // POST /login: a shadow rule, counted and never over.
        for (int i = 0; i < 101; ++i)
            a = client.ask("web", {{{"header_match", "login"}}});
        QCOMPARE(a.response.overall_code(), rlsv3::RateLimitResponse::OK);
        QCOMPARE(a.response.statuses(0).code(), rlsv3::RateLimitResponse::OK);
    }

private:
    std::unique_ptr<RlsSidecarUnderTest> server_;
    std::unique_ptr<RlsClient> client_;
};

QTEST_GUILESS_MAIN(TestRlsGrpc)
#include "tst_rls_grpc.moc"
