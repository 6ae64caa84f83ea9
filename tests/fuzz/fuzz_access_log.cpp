// Access logs: the same bytes read as every format, and the format guess. Each line is parsed or
// counted as unparsed (never both, never lost), requests come sorted by time, and every index a
// request holds points into its tables.

#include <algorithm>

#include "fuzz_check.h"
#include "sim/access_log.h"

using namespace ratelab;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
    constexpr const char* kHarness = "fuzz_access_log";
    const std::string_view text = fuzz::text(data, size);
    sim::detectLogFormat(text);
    for (sim::LogFormat format :
         {sim::LogFormat::Combined, sim::LogFormat::Common, sim::LogFormat::Csv}) {
        const sim::RecordedTraffic t = sim::parseAccessLog(text, format, "fuzz.log");
        fuzz::require(static_cast<std::int64_t>(t.requests.size()) + t.unparsedCount <= t.lines,
                      kHarness, "more requests and unparsed lines than lines");
        fuzz::require(t.unparsed.size() <= sim::kMaxUnparsedListed &&
                          static_cast<std::int64_t>(t.unparsed.size()) <= t.unparsedCount,
                      kHarness, "more unparsed lines listed than counted");
        fuzz::require(std::is_sorted(t.requests.begin(), t.requests.end(),
                                     [](const sim::RecordedRequest& a,
                                        const sim::RecordedRequest& b) { return a.at < b.at; }),
                      kHarness, "requests are not in time order");
        for (const sim::RecordedRequest& r : t.requests) {
            fuzz::require(r.client < t.clients.size() && r.path < t.paths.size() &&
                              r.method < t.methods.size(),
                          kHarness, "a request points past its tables");
            fuzz::require(r.at >= 0 && r.at <= t.span, kHarness, "a time outside the log's span");
        }
    }
    return 0;
}
