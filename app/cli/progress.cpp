#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "ratelab/number_text.h"

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

std::function<void(std::size_t, std::size_t)> cellProgress(ProgressBar& bar) {
    auto lock = std::make_shared<std::mutex>();
    return [&bar, lock](std::size_t done, std::size_t all) {
        std::lock_guard<std::mutex> held(*lock);
        bar.update(static_cast<double>(done) / static_cast<double>(all),
                   std::to_string(done) + " of " + std::to_string(all) + " cells");
    };
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
    if (value >= 1e6) return fixedText(value / 1e6, 2) + "M";
    if (value >= 1e4) return fixedText(value / 1e3, 0) + "k";
    return fixedText(value, 0);
}

}  // namespace ratelab::cli
