#include "sim/fit/fit_check.h"

#include <algorithm>
#include <unordered_map>

#include "sim/run/scenario_runner.h"
#include "sim/scenario/scenario_writer.h"

namespace ratelab::sim::fit {

namespace {

// One run's decisions per class: requests, 429s, and its clients (keys as the checked policy
// derives them), all and throttled.
class CheckTally {
public:
    explicit CheckTally(std::vector<CheckFigures>& out) : out_(out), clients_(out.size()) {}

    void count(std::uint32_t cls, const DecisionRecord& d) {
        CheckFigures& f = out_[cls];
        f.requests += 1;
        const bool throttled = d.status == 429;
        if (throttled) f.throttled += 1;
        clientText(d, text_);
        auto [it, added] = clients_[cls].try_emplace(text_, false);
        if (added) f.clients += 1;
        if (throttled && !it->second) {
            it->second = true;
            f.throttledClients += 1;
        }
    }

private:
    std::vector<CheckFigures>& out_;
    std::vector<std::unordered_map<std::string, bool>> clients_;  // key -> throttled yet
    std::string text_;
};

// The replay's decisions, each in the class the fit gave its client.
class ReplayTally final : public DecisionSink {
public:
    ReplayTally(const FitResult& fit, CheckTally& tally) : fit_(fit), tally_(tally) {}
    void onDecision(const DecisionRecord& d) override { tally_.count(fit_.classOf(d), d); }

private:
    const FitResult& fit_;
    CheckTally& tally_;
};

// The fitted run's decisions, each in its actor's class.
class RunTally final : public DecisionSink {
public:
    RunTally(std::vector<std::uint32_t> actorClass, CheckTally& tally)
        : actorClass_(std::move(actorClass)), tally_(tally) {}
    void onDecision(const DecisionRecord& d) override {
        tally_.count(actorClass_[static_cast<std::size_t>(d.actor)], d);
    }

private:
    std::vector<std::uint32_t> actorClass_;
    CheckTally& tally_;
};

}  // namespace

bool checkFit(FitReader& reader, const FitResult& fit, const FitCheckPolicies& check, FitCheck& out,
              std::string& error) {
    out.name = check.name;
    out.replayed.assign(fit.classes.size(), CheckFigures{});
    out.fitted.assign(fit.classes.size(), CheckFigures{});
    {
        CheckTally tally(out.replayed);
        ReplayTally replay(fit, tally);
        if (!reader.replayUnder(check.policies, replay)) return false;
    }
    // The scenario as a user gets it: written, and read back.
    ScenarioLoadResult loaded = parseScenarioText(scenarioJson(fit.scenario), "fitted scenario");
    if (!loaded.ok()) {
        error = "the fitted scenario does not load:\n" + formatDiagnostics(loaded.diagnostics);
        return false;
    }
    std::vector<std::uint32_t> actorClass;
    for (const Actor& a : loaded.scenario->actors) {
        auto it = std::find_if(fit.classes.begin(), fit.classes.end(),
                               [&](const FitClass& c) { return c.name == a.className; });
        actorClass.push_back(static_cast<std::uint32_t>(it - fit.classes.begin()));
    }
    CheckTally tally(out.fitted);
    RunTally run(std::move(actorClass), tally);
    RunnerOptions options;
    options.decisions = &run;
    options.measureWallTime = false;
    ScenarioRunner runner(std::move(*loaded.scenario), check.policies, options);
    runner.runToEnd();
    return true;
}

}  // namespace ratelab::sim::fit
