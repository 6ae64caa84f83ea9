// The gRPC messages of Envoy's rate limit service read into the service's request and written
// from its answer (app/serve/grpc/rls_messages.cpp), field by field: every unit to its proto
// number (WEEK is 7, after YEAR), a reset of a fraction of a second as a Duration's seconds and
// nanoseconds, presence of the per-descriptor hits_addend (0 included), headers in order.

#include <QtTest>

#include "serve/grpc/rls_messages.h"

using namespace ratelab;
using namespace ratelab::serve;

namespace rlsv3 = envoy::service::ratelimit::v3;

class TestRlsMessages : public QObject {
    Q_OBJECT

private slots:
    void requestFields() {
        rlsv3::RateLimitRequest message;
        message.set_domain("edge");
        message.set_hits_addend(3);
        auto* d0 = message.add_descriptors();
        auto* e = d0->add_entries();
        e->set_key("remote_address");
        e->set_value("198.51.100.7");
        e = d0->add_entries();
        e->set_key("path");
        e->set_value("");
        auto* d1 = message.add_descriptors();
        d1->mutable_hits_addend()->set_value(0);
        auto* d2 = message.add_descriptors();
        d2->mutable_hits_addend()->set_value(std::uint64_t(1) << 40);

        rls::RlsRequest request;
        request.descriptors.resize(7);  // reused buffers shrink to the message
        request.descriptors[1].hitsAddend = 9;
        QCOMPARE(readRlsRequest(message, request), std::string());
        QCOMPARE(request.domain, std::string("edge"));
        QCOMPARE(request.hitsAddend, std::uint64_t(3));
        QCOMPARE(request.descriptors.size(), std::size_t(3));
        QCOMPARE(request.descriptors[0].entries.size(), std::size_t(2));
        QCOMPARE(request.descriptors[0].entries[0].key, std::string("remote_address"));
        QCOMPARE(request.descriptors[0].entries[0].value, std::string("198.51.100.7"));
        QCOMPARE(request.descriptors[0].entries[1].value, std::string());
        QVERIFY(!request.descriptors[0].hitsAddend);
        QCOMPARE(request.descriptors[1].entries.size(), std::size_t(0));
        QVERIFY(request.descriptors[1].hitsAddend.has_value());
        QCOMPARE(*request.descriptors[1].hitsAddend, std::uint64_t(0));
        QCOMPARE(*request.descriptors[2].hitsAddend, std::uint64_t(1) << 40);
    }

    void aLimitOverrideIsNamed() {
        rlsv3::RateLimitRequest message;
        message.set_domain("edge");
        message.add_descriptors();
        message.add_descriptors()->mutable_limit()->set_requests_per_unit(5);
        rls::RlsRequest request;
        const std::string why = readRlsRequest(message, request);
        QVERIFY2(why.rfind("descriptor 1: limit overrides", 0) == 0, why.c_str());
    }

    void units_data() {
        QTest::addColumn<int>("unit");
        QTest::addColumn<int>("proto");
        using U = rls::RlsUnit;
        using P = rlsv3::RateLimitResponse::RateLimit;
        QTest::newRow("second") << int(U::Second) << int(P::SECOND);
        QTest::newRow("minute") << int(U::Minute) << int(P::MINUTE);
        QTest::newRow("hour") << int(U::Hour) << int(P::HOUR);
        QTest::newRow("day") << int(U::Day) << int(P::DAY);
        QTest::newRow("week") << int(U::Week) << 7;
        QTest::newRow("month") << int(U::Month) << 5;
        QTest::newRow("year") << int(U::Year) << 6;
        QTest::newRow("unknown") << int(U::Unknown) << 0;
    }
    void units() {
        QFETCH(int, unit);
        QFETCH(int, proto);
        rls::RlsResponse response;
        rls::RlsStatus status;
        status.currentLimit = rls::RlsLimit{10, static_cast<rls::RlsUnit>(unit), ""};
        response.statuses.push_back(status);
        rlsv3::RateLimitResponse message;
        writeRlsResponse(response, message);
        QCOMPARE(int(message.statuses(0).current_limit().unit()), proto);
    }

    void responseFields() {
        rls::RlsResponse response;
        response.overall = rls::RlsCode::OverLimit;
        rls::RlsStatus counted;
        counted.code = rls::RlsCode::OverLimit;
        counted.currentLimit = rls::RlsLimit{100, rls::RlsUnit::Minute, "per-client"};
        counted.limitRemaining = 0;
        counted.durationUntilReset = 19 * kNanosPerSecond + 500'000'000;
        rls::RlsStatus unlimited;
        unlimited.limitRemaining = 4294967295u;
        response.statuses = {counted, unlimited};
        response.headers = {{"RateLimit-Policy", "\"per-client\";q=100;w=60"},
                            {"Retry-After", "20"}};
        rlsv3::RateLimitResponse message;
        message.set_overall_code(rlsv3::RateLimitResponse::OK);
        message.add_statuses();  // cleared before writing
        writeRlsResponse(response, message);
        QCOMPARE(message.overall_code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(message.statuses_size(), 2);
        const auto& s0 = message.statuses(0);
        QCOMPARE(s0.code(), rlsv3::RateLimitResponse::OVER_LIMIT);
        QCOMPARE(s0.current_limit().requests_per_unit(), 100u);
        QCOMPARE(s0.current_limit().name(), std::string("per-client"));
        QCOMPARE(s0.duration_until_reset().seconds(), std::int64_t(19));
        QCOMPARE(s0.duration_until_reset().nanos(), 500'000'000);
        const auto& s1 = message.statuses(1);
        QCOMPARE(s1.code(), rlsv3::RateLimitResponse::OK);
        QVERIFY(!s1.has_current_limit());
        QVERIFY(!s1.has_duration_until_reset());
        QCOMPARE(s1.limit_remaining(), 4294967295u);
        QCOMPARE(message.response_headers_to_add_size(), 2);
        QCOMPARE(message.response_headers_to_add(0).key(), std::string("RateLimit-Policy"));
        QCOMPARE(message.response_headers_to_add(1).value(), std::string("20"));
    }
};

QTEST_APPLESS_MAIN(TestRlsMessages)
#include "tst_rls_messages.moc"
