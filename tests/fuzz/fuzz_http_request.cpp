// The sidecar's HTTP/1.1 request framing (serve/http/request_parser.h) and the path a policy sees
// (serve/http/request_target.h). The bytes are fed twice: whole, and cut in two at a place the first
// byte picks. Both feeds frame the same requests with the same heads and end the same way; an
// error names one of the statuses the server answers with and a reason. Every target that
// normalises gives a path that normalises to itself.

#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "serve/http/request_parser.h"
#include "serve/http/request_target.h"

using namespace ratelab;

namespace {

constexpr const char* kHarness = "fuzz_http_request";

struct Collector final : serve::RequestSink {
    std::vector<std::string> requests;  // method, target, version, keep-alive and headers
    int continues = 0;

    bool onRequest(const serve::ParsedRequest& r) override {
        std::string s;
        s.append(r.method).append(" ").append(r.target).append(" 1.");
        s += std::to_string(r.versionMinor);
        s += r.keepAlive ? " keep" : " close";
        for (const Header& h : r.headers)
            s.append("\n").append(h.name).append(": ").append(h.value);
        requests.push_back(std::move(s));

        std::string path;
        std::string_view why;
        if (serve::normalizedPath(r.target, path, &why)) {
            std::string again;
            std::string_view whyAgain;
            fuzz::require(serve::normalizedPath(path, again, &whyAgain) && again == path,
                          kHarness, "a normalised path does not normalise to itself");
        } else {
            fuzz::require(!why.empty(), kHarness, "a target refused without a reason");
        }
        return true;
    }
    void onContinue() override { ++continues; }
};

// Feeds `pieces` in order, resuming after pauses; returns the final status.
serve::RequestParser::Status feed(serve::RequestParser& parser, Collector& sink,
                                  const std::vector<std::string_view>& pieces) {
    using Status = serve::RequestParser::Status;
    Status status = Status::Ok;
    for (std::string_view piece : pieces) {
        if (status != Status::Ok) break;
        status = parser.feed(piece, sink);
    }
    return status;
}

bool knownErrorStatus(int status) {
    for (int s : {400, 405, 408, 413, 414, 417, 431, 501, 505}) {
        if (status == s) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t cut = data[0] % size;
    const std::string_view bytes = fuzz::text(data + 1, size - 1);
    const serve::RequestLimits limits{512, 2048, 16, 4096};

    serve::RequestParser whole(limits);
    Collector a;
    const auto statusWhole = feed(whole, a, {bytes});
    serve::RequestParser split(limits);
    Collector b;
    const auto statusSplit =
        feed(split, b, {bytes.substr(0, std::min(cut, bytes.size())),
                        bytes.substr(std::min(cut, bytes.size()))});

    fuzz::require(statusWhole == statusSplit, kHarness, "a cut changes how the bytes end");
    fuzz::require(a.requests == b.requests, kHarness, "a cut changes the requests framed");
    fuzz::require(a.continues == b.continues, kHarness, "a cut changes the 100-continue count");
    if (statusWhole == serve::RequestParser::Status::Error) {
        fuzz::require(knownErrorStatus(whole.error().status), kHarness,
                      "an error with a status the server does not send");
        fuzz::require(whole.error().status == split.error().status, kHarness,
                      "a cut changes the error's status");
        fuzz::require(!whole.error().reason.empty(), kHarness, "an error without a reason");
    }
    fuzz::require(whole.keptBytes() <= bytes.size(), kHarness, "kept more bytes than were fed");
    return 0;
}
