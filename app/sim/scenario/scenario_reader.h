#pragma once

// The scenario file's reader, shared by scenario_file.cpp (the file, its events and
// expectations) and scenario_actor_reader.cpp (an actor: arrival, request, identity, response
// and peer).

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json_reader.h"
#include "ratelab/ip_address.h"
#include "sim/scenario/scenario.h"

namespace ratelab::sim::scenario_reader {

using json::ObjectReader;
using json::Reader;
using json::Value;

// The requests one instance of a session or empirical arrival is expected to send over
// `seconds` (the volume check's estimate).
double expectedRequests(const Arrival& r, double seconds);

// Reads an optional duration in seconds into `out`; false when absent or invalid.
bool readSeconds(ObjectReader& object, std::string_view key, Nanos& out, double min,
                 bool minExclusive);

/// Reads one scenario file's JSON tree; reports every problem, positioned, to `out`.
class ScenarioParser {
public:
    ScenarioParser(std::string file, std::vector<Diagnostic>& out)
        : reader_(std::move(file), out) {}

    std::optional<Scenario> parse(const Value& root);

private:
    void readActor(const Value& v, Scenario& s);
    void readArrival(const Value& v, Arrival& a);
    bool readDistribution(ObjectReader& o, std::string_view key, Distribution& out, double min,
                          double max, bool weighted = true);
    void readRequest(const Value& v, Actor& a);
    void readIdentity(const Value& v, Actor& a);
    void readResponse(const Value& v, ResponseModel& r);
    void readPeer(const Value& v, Actor& a);
    void readEvent(const Value& v, Scenario& s);
    void readChange(const Value& v, PolicyChange& c);
    void readExpectation(const Value& v, Scenario& s);
    // A typo in a rate must not become a run that never ends: refuse scenarios that would send
    // more than kMaxRequests (about an hour and a half at the simulator's speed).
    void checkVolume(const Value& actors, const Scenario& s);
    // Bounds what one request carries: a few headers and attributes, and values with
    // "{instance}" short enough to be written per request without allocating.
    void checkTemplates(const Value& map, const std::vector<std::pair<std::string, std::string>>& v,
                        std::size_t max, std::string_view what);

    Reader reader_;
    std::set<std::string> actorNames_;
};

}  // namespace ratelab::sim::scenario_reader
