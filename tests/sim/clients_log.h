#pragma once

// A recorded log written by the tests, for tuning to a tolerance: 200 clients over ten minutes
// as CSV (ts_ms,key), each at its own Poisson rate. Most send a request every 5 to 40 s, eight
// are busy (one every 2 s) and two are scrapers (three a second): 10.0.0.199 and 10.0.0.200.

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ratelab::simtest {

inline std::string clientsLog() {
    std::mt19937_64 rng(42);
    struct Line {
        std::int64_t ms;
        int client;
    };
    std::vector<Line> lines;
    for (int c = 0; c < 200; ++c) {
        double rate = 0.025 + 0.175 * static_cast<double>(c % 10) / 9.0;  // per second
        if (c >= 190) rate = 0.5;
        if (c >= 198) rate = 3.0;
        std::exponential_distribution<double> gap(rate);
        for (double t = gap(rng); t < 600.0; t += gap(rng))
            lines.push_back({1'700'000'000'000 + static_cast<std::int64_t>(t * 1000), c});
    }
    // In time order, as a server writes its log (the replay drops lines later than its
    // reorder window).
    std::stable_sort(lines.begin(), lines.end(),
                     [](const Line& a, const Line& b) { return a.ms < b.ms; });
    std::string text = "ts_ms,key\n";
    for (const Line& l : lines) {
        text += std::to_string(l.ms) + ",10.0." + std::to_string(l.client / 250) + "." +
                std::to_string(l.client % 250 + 1) + "\n";
    }
    return text;
}

}  // namespace ratelab::simtest
