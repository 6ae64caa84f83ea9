#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ratelab::cli {

bool ProgressBar::stderrIsTerminal() {
    return isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(std::string label) : ProgressBar(std::move(label), stderrIsTerminal()) {}

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled) {}

ProgressBar::~ProgressBar() {
    finish();
}

void ProgressBar::update(double fraction, std::string_view detail) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100) && fraction < 1.0) return;
    last_ = now;
    drawn_ = true;
    constexpr int kWidth = 30;
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r\033[K%s [%s] %3d%% %.*s", label_.c_str(), bar.c_str(),
                 static_cast<int>(fraction * 100), static_cast<int>(detail.size()), detail.data());
    std::fflush(stderr);
}

void ProgressBar::finish() {
    if (!enabled_ || !drawn_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
}

std::string shortCount(double value) {
    char buffer[32];
    if (value >= 1e6) {
        std::snprintf(buffer, sizeof buffer, "%.2fM", value / 1e6);
    } else if (value >= 1e4) {
        std::snprintf(buffer, sizeof buffer, "%.0fk", value / 1e3);
    } else {
        std::snprintf(buffer, sizeof buffer, "%.0f", value);
    }
    return buffer;
}

}  // namespace ratelab::cli
