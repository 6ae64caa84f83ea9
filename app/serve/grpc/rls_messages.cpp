#include "serve/grpc/rls_messages.h"

namespace ratelab::serve {

namespace {

using envoy::service::ratelimit::v3::RateLimitResponse;

RateLimitResponse::Code codeOf(rls::RlsCode code) {
    switch (code) {
        case rls::RlsCode::Ok:
            return RateLimitResponse::OK;
        case rls::RlsCode::OverLimit:
            return RateLimitResponse::OVER_LIMIT;
        case rls::RlsCode::Unknown:
            break;
    }
    return RateLimitResponse::UNKNOWN;
}

RateLimitResponse::RateLimit::Unit unitOf(rls::RlsUnit unit) {
    using Unit = RateLimitResponse::RateLimit;
    switch (unit) {
        case rls::RlsUnit::Second:
            return Unit::SECOND;
        case rls::RlsUnit::Minute:
            return Unit::MINUTE;
        case rls::RlsUnit::Hour:
            return Unit::HOUR;
        case rls::RlsUnit::Day:
            return Unit::DAY;
        case rls::RlsUnit::Week:
            return Unit::WEEK;
        case rls::RlsUnit::Month:
            return Unit::MONTH;
        case rls::RlsUnit::Year:
            return Unit::YEAR;
        case rls::RlsUnit::Unknown:
            break;
    }
    return Unit::UNKNOWN;
}

}  // namespace

std::string readRlsRequest(const envoy::service::ratelimit::v3::RateLimitRequest& message,
                           rls::RlsRequest& out) {
    out.domain = message.domain();
    out.hitsAddend = message.hits_addend();
    out.descriptors.resize(static_cast<std::size_t>(message.descriptors_size()));
    for (int i = 0; i < message.descriptors_size(); ++i) {
        const auto& d = message.descriptors(i);
        if (d.has_limit()) {
            return "descriptor " + std::to_string(i) +
                   ": limit overrides (RateLimitDescriptor.limit) are not supported; the "
                   "configured limits apply only without one";
        }
        rls::RlsDescriptor& to = out.descriptors[static_cast<std::size_t>(i)];
        to.entries.resize(static_cast<std::size_t>(d.entries_size()));
        for (int e = 0; e < d.entries_size(); ++e) {
            to.entries[static_cast<std::size_t>(e)].key = d.entries(e).key();
            to.entries[static_cast<std::size_t>(e)].value = d.entries(e).value();
        }
        to.hitsAddend.reset();
        if (d.has_hits_addend()) to.hitsAddend = d.hits_addend().value();
    }
    return {};
}

void writeRlsResponse(const rls::RlsResponse& response,
                      envoy::service::ratelimit::v3::RateLimitResponse& out) {
    out.Clear();
    out.set_overall_code(codeOf(response.overall));
    for (const rls::RlsStatus& s : response.statuses) {
        RateLimitResponse::DescriptorStatus* status = out.add_statuses();
        status->set_code(codeOf(s.code));
        status->set_limit_remaining(s.limitRemaining);
        if (!s.currentLimit) continue;
        RateLimitResponse::RateLimit* limit = status->mutable_current_limit();
        limit->set_requests_per_unit(s.currentLimit->requestsPerUnit);
        limit->set_unit(unitOf(s.currentLimit->unit));
        limit->set_name(s.currentLimit->name);
        auto* reset = status->mutable_duration_until_reset();
        reset->set_seconds(s.durationUntilReset / kNanosPerSecond);
        reset->set_nanos(static_cast<std::int32_t>(s.durationUntilReset % kNanosPerSecond));
    }
    for (const auto& [name, value] : response.headers) {
        auto* header = out.add_response_headers_to_add();
        header->set_key(name);
        header->set_value(value);
    }
}

}  // namespace ratelab::serve
