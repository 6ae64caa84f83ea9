// ratelab-cli rls-ask: one ShouldRateLimit call to a rate limit service (ratelab's `serve
// --grpc`, or any other speaking Envoy's API), its answer printed as JSON: a configuration can be
// tried from a shell, without a gRPC tool. Exit 0 for OK, 1 for OVER_LIMIT, 2 when the request is
// refused as bad (by this command or the service), 69 when the service cannot be reached.

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "envoy/service/ratelimit/v3/rls.grpc.pb.h"
#include "serve/admin/rls_metrics.h"

namespace ratelab::cli {

namespace {

using envoy::extensions::common::ratelimit::v3::RateLimitDescriptor;
using envoy::service::ratelimit::v3::RateLimitRequest;
using envoy::service::ratelimit::v3::RateLimitResponse;

// "k=v,k2=v2": entries in order; a value may hold '=' (the first one separates), not ','.
bool readDescriptor(const std::string& text, RateLimitDescriptor& out, std::string* why) {
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0) {
            *why = "entry \"" + item + "\": expected KEY=VALUE";
            return false;
        }
        auto* entry = out.add_entries();
        entry->set_key(item.substr(0, eq));
        entry->set_value(item.substr(eq + 1));
        if (end == text.size()) return true;
        start = end + 1;
    }
}

// Codes that say the service was not there to answer, rather than that it refused the request.
bool unavailable(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::UNAVAILABLE:
        case grpc::StatusCode::DEADLINE_EXCEEDED:
        case grpc::StatusCode::CANCELLED:
        case grpc::StatusCode::UNIMPLEMENTED:
        case grpc::StatusCode::INTERNAL:
            return true;
        default:
            return false;
    }
}

int rlsAskCommand(const Arguments& args) {
    RateLimitRequest request;
    request.set_domain(args.value("domain"));
    for (const std::string& text : args.values("descriptor")) {
        std::string why;
        if (!readDescriptor(text, *request.add_descriptors(), &why)) {
            return fail(kInvalidInput, "--descriptor \"" + text + "\": " + why);
        }
    }
    std::int64_t hits = 0, timeoutMs = 2000;
    if (!args.wholeNumber("hits-addend", 0, std::int64_t(UINT32_MAX), hits) ||
        !args.wholeNumber("timeout-ms", 1, 3'600'000, timeoutMs)) {
        return kUsage;
    }
    request.set_hits_addend(static_cast<std::uint32_t>(hits));

    const std::string address = args.value("grpc");
    auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    auto stub = envoy::service::ratelimit::v3::RateLimitService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeoutMs));
    RateLimitResponse response;
    const grpc::Status status = stub->ShouldRateLimit(&context, request, &response);
    if (!status.ok()) {
        const std::string message =
            std::string(serve::grpcCodeName(status.error_code())) + ": " + status.error_message();
        if (unavailable(status.error_code())) return fail(kUnavailable, address + ": " + message);
        return fail(kInvalidInput, message);
    }
    google::protobuf::util::JsonPrintOptions json;
    json.always_print_primitive_fields = true;
    std::string text;
    if (!google::protobuf::util::MessageToJsonString(response, &text, json).ok()) {
        return fail(kInvalidInput, "the answer cannot be written as JSON");
    }
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
    return response.overall_code() == RateLimitResponse::OVER_LIMIT ? kOverLimit : kSuccess;
}

Command makeRlsAskCommand() {
    Command c;
    c.name = "rls-ask";
    c.summary = "ask a rate limit service (serve --grpc) about one request, as Envoy does";
    c.description =
        "Sends one ShouldRateLimit call (envoy.service.ratelimit.v3) to ADDR and prints the "
        "answer as JSON (proto3 JSON: overallCode, statuses with currentLimit, limitRemaining "
        "and durationUntilReset, responseHeadersToAdd). Each --descriptor is one descriptor, "
        "its entries KEY=VALUE separated by commas, in order, as Envoy's rate_limits actions "
        "build them.";
    c.options = {
        Option::value("grpc", "ADDR", "The service's HOST:PORT.").asRequired(),
        Option::value("domain", "D", "The rate limit domain.").asRequired(),
        Option::value("descriptor", "K=V[,K=V...]", "One descriptor's entries.").asRepeated(),
        Option::value("hits-addend", "N",
                      "Hits the request charges to each descriptor (default 0, meaning 1)."),
        Option::value("timeout-ms", "N", "Deadline of the call (default 2000)."),
    };
    c.exitStatuses = {{1, "the answer is OVER_LIMIT"},
                      {2, "the request is refused as bad, by this command or the service"},
                      {69, "the service cannot be reached or does not answer in time"}};
    c.run = &rlsAskCommand;
    return c;
}

}  // namespace

RATELAB_CLI_COMMAND(makeRlsAskCommand());

}  // namespace ratelab::cli
