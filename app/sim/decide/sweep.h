#pragma once

// Parameter sweeps: run one scenario over a grid of policy numbers, each cell a full,
// independent run, so the best trade-off between throttled users and admitted attackers can be
// read off. Cells run on several threads; results do not depend on the thread count.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ratelab/policy.h"
#include "sim/scenario/scenario.h"
#include "sim/run/scenario_runner.h"

namespace ratelab::sim {

/// A policy field a sweep can vary (the one list of them: parsers, help texts and the
/// workbench's trade-off map read it).
struct SweepField {
    std::string_view name;   ///< as written in --vary: "capacity"
    std::string_view label;  ///< for people: "capacity (burst, or quota per window)"
};
inline constexpr SweepField kSweepFields[] = {
    {"capacity", "capacity (burst, or quota per window)"},
    {"refill", "refill per second"},
    {"window_ms", "window (ms)"},
    {"delay", "leaky bucket delay"},
    {"cost", "cost per request"},
    {"per_peer", "budget: credentials per peer"},
    {"ipv4_prefix", "IPv4 prefix length"},
    {"ipv6_prefix", "IPv6 prefix length"},
};

/// "capacity, refill, ... or ipv6_prefix": the names of kSweepFields, for help and errors.
std::string sweepFieldList();

/// The field's value in `policy` (refill per second, window in ms, prefix lengths in bits).
/// Nullopt for a name kSweepFields does not hold.
std::optional<double> sweepFieldValue(const Policy& policy, std::string_view field);

/// One swept field (kSweepFields; "refill_per_second" is read as "refill"), on the policy named
/// `policy` (empty: every policy), from `from` to `to` inclusive by `step`.
struct SweepAxis {
    std::string policy;
    std::string field;
    double from = 0;
    double to = 0;
    double step = 1;

    /// from, from + step, ... up to `to` (within a rounding tolerance), at most kMaxSweepValues.
    std::vector<double> values() const;
};

inline constexpr std::size_t kMaxSweepValues = 10'000;
inline constexpr std::size_t kMaxSweepCells = 100'000;

/// Parses "capacity=5:100:5" or "login.refill=0.5:10:0.5". Nullopt with `error` set otherwise,
/// the message starting with `option` and the text ("--vary \"capacity=5\": ...").
std::optional<SweepAxis> parseSweepAxis(std::string_view text, std::string& error,
                                        std::string_view option = "--vary");

/// A range of about ten values around `policy`'s value of `field` (kSweepFields), the value
/// among them: capacity 20 gives 4:40:4, refill 2.5 gives 0.5:5:0.5, an IPv6 prefix of 64
/// gives 48:80:4. What the workbench proposes before the user types a range of their own.
/// REQUIRES: `field` is one of kSweepFields.
SweepAxis axisAround(const Policy& policy, std::string_view field);

/// `policies` with every axis applied at `values` (one value per axis) and limits recompiled.
/// Fails with `error` when a value is out of range (capacity < 1, refill <= 0, a prefix beyond
/// the address, ...) or an axis names a policy that does not exist.
std::optional<PolicySet> applySweepValues(const PolicySet& policies,
                                          const std::vector<SweepAxis>& axes,
                                          const std::vector<double>& values, std::string& error);

struct SweepCell {
    std::vector<double> values;  ///< one per axis
    RunTotals totals;
    bool pass = false;  ///< every expectation of the scenario holds
    std::int64_t failedExpectations = 0;
    /// Set when the cell's policy set does not validate (the first error, e.g. a budget slot
    /// TTL shorter than the new refill time): the cell is not run, and never passes.
    std::string invalid;
};

struct SweepOptions {
    int threads = 2;
    /// Called from worker threads after each cell with (cells done, cells in all).
    std::function<void(std::size_t, std::size_t)> progress;
    /// Set to stop early, within a slice of a cell (runSweepCell); unfinished cells are absent.
    const std::atomic<bool>* cancel = nullptr;
};

struct SweepResult {
    std::vector<std::string> classNames;
    std::vector<SweepCell> cells;  ///< in grid order: the last axis varies fastest
    std::string error;             ///< set when a cell's policy could not be built
};

/// The grid's cells' values in grid order (the last axis varies fastest). Empty, with `error`
/// set, when it would hold more than kMaxSweepCells.
std::vector<std::vector<double>> sweepGrid(const std::vector<SweepAxis>& axes, std::string& error);

/// Runs one cell: `policies` at `values`, the scenario to its end, expectations evaluated.
/// Nullopt when `cancel` (may be null) was set before the run ended: it is read between
/// slices of kSweepCancelSlice requests, so a cancelled cell stops within milliseconds.
/// REQUIRES: applySweepValues succeeds for these values. Thread-safe (each call its own run).
std::optional<SweepCell> runSweepCell(const Scenario& scenario, const PolicySet& policies,
                                      const std::vector<SweepAxis>& axes,
                                      const std::vector<double>& values,
                                      const std::atomic<bool>* cancel = nullptr);

inline constexpr std::int64_t kSweepCancelSlice = 65'536;

/// Runs every cell of the grid. REQUIRES: the scenario checks against `policies`.
SweepResult runSweep(const Scenario& scenario, const PolicySet& policies,
                     const std::vector<SweepAxis>& axes, const SweepOptions& options = {});

/// One row per cell: the axis values, then per class throttled_fraction and allowed_per_s,
/// then failed_expectations, pass, and invalid (why the cell's policy does not validate;
/// empty otherwise).
std::string sweepCsv(const Scenario& scenario, const std::vector<SweepAxis>& axes,
                     const SweepResult& result);

}  // namespace ratelab::sim
