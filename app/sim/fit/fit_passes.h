#pragma once

// The readings of a fit (sim/fit/log_fit.h's internals). Each streams the logs through the
// replay, so clients are keyed exactly as `ratelab-cli replay` keys them, and memory grows with
// the clients, not the lines: the first finds every client with its requests, span, sessions,
// statuses and routes; the second, how each client's requests arrived (session sizes, the gaps
// within sessions and between them), summarised per actor; the checks replay the log under
// other policies (LogRereader: "-" is kept for the readings after the first).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ratelab/policy.h"
#include "sim/fit/fit_summary.h"
#include "sim/log/record_stream.h"
#include "sim/log/recorded_traffic.h"
#include "sim/log/rereader.h"
#include "sim/report/counters.h"
#include "sim/scenario/scenario_limits.h"

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
    /// Its requests split where a gap is longer than the fit's session gap (or a session
    /// reached kMaxSessionSize).
    std::int64_t sessions = 0;
    std::int64_t inSession = 0;  ///< requests of its latest session (the readings' state)
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
    /// What the log's times are whole multiples of: a second, a millisecond, or 0 (finer).
    Nanos resolution = kNanosPerSecond;
    std::int64_t requests = 0;
    /// Every client's number by its key (Client::key points into it).
    std::unordered_map<std::string, std::uint32_t> byKey;
    /// Every client's routes, client by client (Client::routes are views into it).
    std::vector<std::pair<std::uint64_t, std::int64_t>> routeCounts;
};

/// How the requests of the clients of one actor arrived: its sessions' sizes, each with its span
/// (nanoseconds from its first request to its last) as companion, the idle gaps between
/// sessions, and every gap whichever it was.
struct Arrivals {
    Summary sessions;
    Summary idle;
    Summary gaps;
};

/// The readings of one fit. Not thread-safe.
class FitReader {
public:
    /// `reading` receives what the first reading found, files named as in `input`; `progress`
    /// sees all `readings` as one (done and total are `readings` times the logs' bytes).
    /// Requests more than `sessionGap` apart start a new session.
    FitReader(const ReplayInput& input, const PolicySet& policies, Nanos sessionGap, int readings,
              LogReading& reading, LoadProgress progress);
    FitReader(const FitReader&) = delete;
    FitReader& operator=(const FitReader&) = delete;

    /// The first reading. Null when reading stopped (reading.error), no line could be replayed
    /// or `progress` said stop.
    LogClients* readClients();
    /// The second reading: client c's requests into out[actorOf[c]]. False when reading
    /// stopped, the log changed since the first reading (both with reading.error) or
    /// `progress` said stop. REQUIRES: readClients() succeeded; actorOf has one entry per
    /// client, each < out.size().
    bool readArrivals(std::span<const std::uint32_t> actorOf, std::vector<Arrivals>& out);
    /// One more reading, replayed under `policies` into `sink`; false as readArrivals().
    bool replayUnder(const PolicySet& policies, DecisionSink& sink);

private:
    bool replay(const PolicySet& policies, DecisionSink& sink, LogReading& reading);
    bool sameAsFirst(bool read, const LogReading& again, std::int64_t requests);

    LogRereader log_;
    const PolicySet& policies_;
    Nanos sessionGap_;
    int readings_;
    int pass_ = 0;
    LogReading& reading_;
    LoadProgress progress_;
    LogClients clients_;
};

/// Whether the request `gap` after a session of `inSession` requests starts a new one: a gap
/// longer than the session gap, or a session as long as the scenario loader allows (so that a
/// fitted size stays inside its bound).
inline bool startsSession(Nanos gap, Nanos sessionGap, std::int64_t inSession) {
    return gap > sessionGap || inSession >= scenario_limits::kMaxSessionSize;
}

}  // namespace ratelab::sim::fit
