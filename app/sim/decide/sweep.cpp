#include "sim/decide/sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <thread>
#include <type_traits>

#include "ratelab/number_text.h"
#include "ratelab/policy_file.h"
#include "sim/report/report.h"

namespace ratelab::sim {

namespace {

bool parseDouble(std::string_view text, double& out) {
    if (text.empty()) return false;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

std::string formatValue(double x) {
    return numberText(x, 10);
}

bool setField(Policy& p, std::string_view field, double value, std::string& error) {
    auto whole = [&](std::int64_t min, std::int64_t max, auto& out) {
        if (value != std::floor(value) || value < static_cast<double>(min) ||
            value > static_cast<double>(max)) {
            error = std::string(field) + " must be a whole number from " + std::to_string(min) +
                    " to " + std::to_string(max) + ", found " + formatValue(value);
            return false;
        }
        out = static_cast<std::remove_reference_t<decltype(out)>>(value);
        return true;
    };
    constexpr std::int64_t kHuge = 1'000'000'000'000'000;
    const bool rate = isRateAlgorithm(p.algorithm);
    auto notFor = [&](const char* what) {
        error = "policy \"" + p.name + "\" uses " + std::string(algorithmName(p.algorithm)) +
                ", which " + what;
        return false;
    };
    if (field == "capacity") {
        return whole(p.algorithm == Algorithm::LeakyBucket ? 0 : 1, kHuge, p.capacity);
    }
    if (field == "cost") return whole(1, kHuge, p.cost);
    if (field == "window_ms")
        return rate ? notFor("has no window_ms") : whole(1, kHuge, p.windowMs);
    if (field == "delay") {
        return p.algorithm != Algorithm::LeakyBucket ? notFor("has no delay")
                                                     : whole(0, kHuge, p.delay);
    }
    if (field == "per_peer") {
        if (!p.budget.enabled) {
            error = "policy \"" + p.name + "\" has no bucket budget to vary";
            return false;
        }
        return whole(1, 1'000'000'000, p.budget.perPeer);
    }
    if (field == "ipv4_prefix") return whole(1, 32, p.key.ipv4Prefix);
    if (field == "ipv6_prefix") return whole(1, 128, p.key.ipv6Prefix);
    if (field == "refill") {
        if (!rate) return notFor("does not refill");
        if (!(value > 0) || value > 1e9) {
            error = "refill must be above 0 and at most 1e9, found " + formatValue(value);
            return false;
        }
        p.refillPerSecond = value;
        return true;
    }
    error = "cannot vary \"" + std::string(field) + "\"";
    return false;
}

const SweepField* findField(std::string_view name) {
    for (const SweepField& f : kSweepFields) {
        if (f.name == name) return &f;
    }
    return nullptr;
}

}  // namespace

std::string sweepFieldList() {
    std::string names;
    for (std::size_t i = 0; i < std::size(kSweepFields); ++i) {
        if (i > 0) names += i + 1 == std::size(kSweepFields) ? " or " : ", ";
        names += kSweepFields[i].name;
    }
    return names;
}

std::optional<double> sweepFieldValue(const Policy& p, std::string_view field) {
    if (field == "capacity") return static_cast<double>(p.capacity);
    if (field == "refill") return p.refillPerSecond;
    if (field == "window_ms") return static_cast<double>(p.windowMs);
    if (field == "delay") return static_cast<double>(p.delay);
    if (field == "cost") return static_cast<double>(p.cost);
    if (field == "per_peer") return static_cast<double>(p.budget.perPeer);
    if (field == "ipv4_prefix") return static_cast<double>(p.key.ipv4Prefix);
    if (field == "ipv6_prefix") return static_cast<double>(p.key.ipv6Prefix);
    return std::nullopt;
}

SweepAxis axisAround(const Policy& policy, std::string_view field) {
    SweepAxis axis;
    axis.field = std::string(field);
    const double value = sweepFieldValue(policy, field).value_or(1);
    if (field == "ipv4_prefix" || field == "ipv6_prefix") {
        // Four steps either side, within the address: /28../32 for IPv4 at 32, /48../80 at 64.
        const double width = field == "ipv4_prefix" ? 32 : 128;
        axis.step = width / 32;
        axis.from = std::max(axis.step, value - 4 * axis.step);
        axis.to = std::min(width, value + 4 * axis.step);
        return axis;
    }
    // Ten values from a fifth of the current one to twice it, the current one the fifth.
    if (field == "refill") {
        const double fifth = value / 5;
        const double magnitude = std::pow(10.0, std::floor(std::log10(fifth)) - 1);
        axis.step = std::round(fifth / magnitude) * magnitude;  // two significant digits
        axis.from = axis.step;
    } else {
        axis.step = std::max(1.0, std::round(value / 5));
        // A delay or a leaky bucket's capacity may be 0; every other whole field starts at 1.
        axis.from = value == 0 ? 0 : axis.step;
    }
    // Rounded as values() rounds, so that the range reads back as it was written.
    axis.step = std::round(axis.step * 1e9) / 1e9;
    axis.to = std::round((axis.from + 9 * axis.step) * 1e9) / 1e9;
    return axis;
}

std::vector<double> SweepAxis::values() const {
    std::vector<double> out;
    // Values are computed as from + i * step, not by accumulation, so 0.1 steps do not drift.
    const double tolerance = step * 1e-9;
    for (std::size_t i = 0; out.size() < kMaxSweepValues; ++i) {
        double v = from + static_cast<double>(i) * step;
        if (v > to + tolerance) break;
        out.push_back(std::round(v * 1e9) / 1e9);
    }
    return out;
}

std::optional<SweepAxis> parseSweepAxis(std::string_view text, std::string& error,
                                        std::string_view option) {
    const std::string quoted = std::string(option) + " \"" + std::string(text) + "\": ";
    SweepAxis axis;
    const std::size_t eq = text.find('=');
    if (eq == std::string_view::npos) {
        error = quoted + "expected FIELD=FROM:TO:STEP";
        return std::nullopt;
    }
    std::string_view name = text.substr(0, eq);
    if (const std::size_t dot = name.rfind('.'); dot != std::string_view::npos) {
        axis.policy = std::string(name.substr(0, dot));
        name = name.substr(dot + 1);
    }
    if (name == "refill_per_second") name = "refill";
    if (!findField(name)) {
        error = quoted + "cannot vary \"" + std::string(name) + "\"; use " + sweepFieldList();
        return std::nullopt;
    }
    axis.field = std::string(name);
    std::string_view range = text.substr(eq + 1);
    const std::size_t c1 = range.find(':');
    const std::size_t c2 = c1 == std::string_view::npos ? c1 : range.find(':', c1 + 1);
    if (c2 == std::string_view::npos || !parseDouble(range.substr(0, c1), axis.from) ||
        !parseDouble(range.substr(c1 + 1, c2 - c1 - 1), axis.to) ||
        !parseDouble(range.substr(c2 + 1), axis.step)) {
        error = quoted + "expected FROM:TO:STEP numbers";
        return std::nullopt;
    }
    if (!(axis.step > 0) || axis.from > axis.to) {
        error = quoted + "needs FROM <= TO and STEP > 0";
        return std::nullopt;
    }
    if ((axis.to - axis.from) / axis.step >= static_cast<double>(kMaxSweepValues)) {
        error = quoted + "more than " + std::to_string(kMaxSweepValues) + " values";
        return std::nullopt;
    }
    return axis;
}

std::optional<PolicySet> applySweepValues(const PolicySet& policies,
                                          const std::vector<SweepAxis>& axes,
                                          const std::vector<double>& values, std::string& error) {
    PolicySet set = policies;
    for (std::size_t a = 0; a < axes.size(); ++a) {
        bool matched = false;
        for (Policy& p : set.policies) {
            if (!axes[a].policy.empty() && p.name != axes[a].policy) continue;
            matched = true;
            if (!setField(p, axes[a].field, values[a], error)) return std::nullopt;
        }
        if (!matched) {
            error = "--vary names policy \"" + axes[a].policy +
                    "\", which the policy file does "
                    "not define";
            return std::nullopt;
        }
    }
    return set;
}

std::vector<std::vector<double>> sweepGrid(const std::vector<SweepAxis>& axes, std::string& error) {
    std::vector<std::vector<double>> axisValues;
    std::size_t cells = 1;
    for (const SweepAxis& axis : axes) {
        axisValues.push_back(axis.values());
        cells *= axisValues.back().size();
        if (cells > kMaxSweepCells) {
            error = "the sweep has more than " + std::to_string(kMaxSweepCells) + " cells";
            return {};
        }
    }
    std::vector<std::vector<double>> grid(cells);
    for (std::size_t i = 0; i < cells; ++i) {
        std::size_t rest = i;
        grid[i].resize(axes.size());
        for (std::size_t a = axes.size(); a-- > 0;) {
            grid[i][a] = axisValues[a][rest % axisValues[a].size()];
            rest /= axisValues[a].size();
        }
    }
    return grid;
}

std::optional<SweepCell> runSweepCell(const Scenario& scenario, const PolicySet& policies,
                                      const std::vector<SweepAxis>& axes,
                                      const std::vector<double>& values,
                                      const std::atomic<bool>* cancel) {
    SweepCell cell;
    cell.values = values;
    // An invalid cell reports nothing: zero counts for every class.
    const std::size_t classes = scenario.classNames().size();
    cell.totals.classes.assign(classes, ClassCounters{});
    cell.totals.peakAllowed.assign(classes, 0);
    cell.totals.spread.assign(classes, ClassSpread{});
    std::string error;
    std::optional<PolicySet> set = applySweepValues(policies, axes, values, error);
    for (const Diagnostic& d : validatePolicySet(*set, "sweep")) {
        if (d.severity == Diagnostic::Severity::Error) {
            cell.invalid = d.message;
            cell.failedExpectations = static_cast<std::int64_t>(scenario.expectations.size());
            return cell;
        }
    }
    RunnerOptions runnerOptions;
    runnerOptions.measureWallTime = false;
    ScenarioRunner runner(scenario, std::move(*set), runnerOptions);
    while (!runner.finished()) {
        if (cancel && cancel->load(std::memory_order_relaxed)) return std::nullopt;
        runner.advance(runner.duration(), kSweepCancelSlice);
    }
    cell.totals = runner.totals();
    for (const ExpectationResult& e :
         evaluateExpectations(scenario, runner.classNames(), cell.totals)) {
        cell.failedExpectations += e.pass ? 0 : 1;
    }
    cell.pass = cell.failedExpectations == 0;
    return cell;
}

SweepResult runSweep(const Scenario& scenario, const PolicySet& policies,
                     const std::vector<SweepAxis>& axes, const SweepOptions& options) {
    SweepResult result;
    result.classNames = scenario.classNames();
    const std::vector<std::vector<double>> grid = sweepGrid(axes, result.error);
    if (!result.error.empty()) return result;
    // Check every cell's values first, so a bad value fails before any run.
    for (const std::vector<double>& values : grid) {
        if (!applySweepValues(policies, axes, values, result.error)) return result;
    }
    const std::size_t cells = grid.size();
    std::vector<std::optional<SweepCell>> done(cells);
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> finished{0};
    auto work = [&] {
        for (;;) {
            if (options.cancel && options.cancel->load(std::memory_order_relaxed)) return;
            const std::size_t i = next.fetch_add(1);
            if (i >= cells) return;
            done[i] = runSweepCell(scenario, policies, axes, grid[i], options.cancel);
            if (!done[i]) return;
            const std::size_t n = finished.fetch_add(1) + 1;
            if (options.progress) options.progress(n, cells);
        }
    };
    const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(cells)));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    for (std::thread& t : pool)
        t.join();
    for (auto& cell : done) {
        if (cell) result.cells.push_back(std::move(*cell));
    }
    return result;
}

std::string sweepCsv(const Scenario& scenario, const std::vector<SweepAxis>& axes,
                     const SweepResult& result) {
    std::string out;
    for (const SweepAxis& axis : axes) {
        if (!out.empty()) out += ",";
        out += axis.policy.empty() ? axis.field : axis.policy + "." + axis.field;
    }
    for (const std::string& c : result.classNames) {
        out += "," + c + ".throttled_fraction," + c + ".allowed_per_s";
    }
    out += ",failed_expectations,pass,invalid\n";
    for (const SweepCell& cell : result.cells) {
        std::string row;
        for (double v : cell.values) {
            if (!row.empty()) row += ",";
            row += formatValue(v);
        }
        for (const std::string& c : result.classNames) {
            const double throttled =
                *summaryMetric(c + ".throttled_fraction", result.classNames, cell.totals,
                               scenario.duration, scenario.sampleInterval);
            const double perSecond =
                *summaryMetric(c + ".allowed_per_s", result.classNames, cell.totals,
                               scenario.duration, scenario.sampleInterval);
            row += "," + formatValue(throttled) + "," + formatValue(perSecond);
        }
        row += "," + std::to_string(cell.failedExpectations) + (cell.pass ? ",true," : ",false,");
        if (!cell.invalid.empty()) {
            row += '"';
            for (char c : cell.invalid) {
                if (c == '"') row += '"';
                row += c;
            }
            row += '"';
        }
        row += "\n";
        out += row;
    }
    return out;
}

}  // namespace ratelab::sim
