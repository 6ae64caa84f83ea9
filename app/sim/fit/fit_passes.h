#pragma once

// The two readings of a fit (sim/fit/log_fit.h's internals). Both stream the logs through the
// replay, so clients are keyed exactly as `ratelab-cli replay` keys them, and memory grows with
// the clients, not the lines: the first finds every client with its requests, span, statuses
// and routes; the second, the gaps between the requests of the busiest (LogRereader: "-" is
// kept for the second reading).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ratelab/policy.h"
#include "sim/log/recorded_traffic.h"
#include "sim/log/rereader.h"
#include "sim/log/record_stream.h"
#include "sim/report/counters.h"

namespace ratelab::sim::fit {

/// What the key says the client is: how its fitted actor is identified.
enum class KeyKind : std::uint8_t { Address, Authorization, Principal, Header, Other };
KeyKind keyKind(std::string_view key);

/// The client a decision counts for: its bucket key; "-" and the client field when no policy
/// matched and nothing keyed the request.
void clientText(const DecisionRecord& d, std::string& out);

struct Client {
    const std::string* key = nullptr;  ///< the engine's key; never written
    KeyKind kind = KeyKind::Other;
    std::int64_t requests = 0;
    Nanos first = 0;
    Nanos last = 0;
    std::vector<std::pair<int, std::int64_t>> statuses;  ///< logged status -> lines, by status
    /// Requests per route (method << 32 | path, ids into LogClients::strings).
    std::span<const std::pair<std::uint64_t, std::int64_t>> routes;
    std::uint32_t classIndex = 0;  ///< set by the fit
};

/// What the first reading found.
struct LogClients {
    std::vector<Client> clients;       ///< by first request
    std::vector<std::string> strings;  ///< methods and paths, by first request
    Nanos span = 0;                    ///< the last request's time
    std::int64_t requests = 0;
    /// Every client's number by its key (Client::key points into it).
    std::unordered_map<std::string, std::uint32_t> byKey;
    /// Every client's routes, client by client (Client::routes are views into it).
    std::vector<std::pair<std::uint64_t, std::int64_t>> routeCounts;
};

/// How one client's requests arrived: the gaps between them, summed against its mean gap in
/// the order they came (so the sums equal those over the request times held in memory).
struct Gaps {
    std::int64_t requests = 0;  ///< of the first reading
    Nanos first = 0, last = 0;
    double mean = 0;        ///< (last - first) / (requests - 1)
    std::int64_t seen = 0;  ///< requests of the second reading
    Nanos previous = 0;
    double squares = 0;  ///< of the gaps' differences from the mean
    std::int64_t bursts = 1;
    double inner = 0;  ///< the gaps within bursts (not above the mean), summed
    std::int64_t innerGaps = 0;

    void add(Nanos at);
};

/// The readings of one fit. Not thread-safe.
class FitReader {
public:
    /// `reading` receives what the first reading found, files named as in `input`; `progress`
    /// sees both readings as one (done and total are twice the logs' bytes).
    FitReader(const ReplayInput& input, const PolicySet& policies, LogReading& reading,
              LoadProgress progress);
    FitReader(const FitReader&) = delete;
    FitReader& operator=(const FitReader&) = delete;

    /// The first reading. Null when reading stopped (reading.error), no line could be replayed
    /// or `progress` said stop.
    LogClients* readClients();
    /// The second reading: the gaps of `top`'s requests. False when reading stopped, the log
    /// changed since the first reading (both with reading.error) or `progress` said stop.
    /// REQUIRES: readClients() succeeded; `top` are its clients.
    bool readGaps(std::span<const Client* const> top, std::vector<Gaps>& gaps);

private:
    bool replay(DecisionSink& sink, LogReading& reading, int pass);

    LogRereader log_;
    const PolicySet& policies_;
    LogReading& reading_;
    LoadProgress progress_;
    LogClients clients_;
};

}  // namespace ratelab::sim::fit
