#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ratelab::cli {

/// A one-line progress bar on stderr, redrawn at most ten times a second, shown only when
/// stderr is a terminal: redirected output and CI logs stay quiet. Not thread-safe.
class ProgressBar {
public:
    explicit ProgressBar(std::string label);
    ProgressBar(std::string label, bool enabled);
    ~ProgressBar();

    /// `fraction` in [0, 1]; `detail` is printed after the bar ("1.2M req/s").
    void update(double fraction, std::string_view detail = {});
    /// Clears the line. Called by the destructor too.
    void finish();

    bool enabled() const { return enabled_; }
    /// True when stderr is a terminal.
    static bool stderrIsTerminal();

private:
    std::string label_;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_{};
};

/// A progress callback for cells done on several threads (a sweep's: SweepOptions::progress):
/// "DONE of ALL cells" on `bar`, one thread at a time. `bar` must outlive the callback.
std::function<void(std::size_t done, std::size_t all)> cellProgress(ProgressBar& bar);

/// "1.23M", "456k", "789": a count for a progress line.
std::string shortCount(double value);

}  // namespace ratelab::cli
