// ratelab-tradeoff-frames: times the workbench's trade-off map as a user meets it. The whole
// window is shown (offscreen works), the 10^6-request scenario of decide_scenario.h is opened
// and a 10 x 10 map (capacity 4..40 by 4, refill 0.5..5 by 0.5: 100 full runs on the map's
// worker threads) is started from its panel, while a 5 ms timer on the GUI thread records the
// largest gap between its ticks, as tst_responsiveness does. Prints one line of name=value
// figures, the load average before and after among them. Never part of ctest.
//
//   QT_QPA_PLATFORM=offscreen build/tests/bench/ratelab-tradeoff-frames

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <sys/resource.h>

#include "bench/decide_scenario.h"
#include "gui/window/main_window.h"
#include "gui/tradeoff/tradeoff_panel.h"
#include "gui/window/user_interaction.h"
#include "gui/session/workbench.h"

namespace {

double cpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

QString loadAverage() {
    QFile f("/proc/loadavg");
    if (!f.open(QIODevice::ReadOnly)) return "unknown";
    return QString::fromLatin1(f.readAll()).section(' ', 0, 2).replace(' ', '/');
}

bool write(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

}  // namespace

int main(int argc, char* argv[]) {
    using namespace ratelab;
    QApplication app(argc, argv);
    QTemporaryDir dir;
    const QString policy = dir.filePath("api.json");
    const QString scenario = dir.filePath("decide-bench.json");
    if (!write(policy, R"({ "version": 1, "policies": [ { "name": "api",
        "match": { "path_prefix": "/" }, "algorithm": "token_bucket", "capacity": 20,
        "refill_per_second": 5.0 } ] })") ||
        !write(scenario, bench::kDecideScenarioJson)) {
        std::fprintf(stderr, "cannot write the inputs in %s\n", qPrintable(dir.path()));
        return 2;
    }
    gui::DialogInteraction ui;
    gui::Workbench workbench(ui);
    gui::MainWindow window(workbench, ui);
    window.resize(1600, 1000);
    window.show();
    if (!workbench.openPolicy(policy) || !workbench.openScenario(scenario)) return 2;
    window.showTradeoff();
    gui::TradeoffPanel& panel = *window.tradeoffPanel();
    std::string error;
    panel.setAxes({*sim::parseSweepAxis("capacity=4:40:4", error),
                   *sim::parseSweepAxis("refill=0.5:5:0.5", error)});

    QElapsedTimer clock;
    qint64 last = -1;
    qint64 largestGap = 0;
    int longGaps = 0;  // over 50 ms
    QTimer watchdog;
    watchdog.setTimerType(Qt::PreciseTimer);
    watchdog.setInterval(5);
    QObject::connect(&watchdog, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (last >= 0) largestGap = std::max(largestGap, now - last);
        if (last >= 0 && now - last > 50'000'000) {
            ++longGaps;
            if (std::getenv("RATELAB_GAPS"))
                std::fprintf(stderr, "gap %.1f ms at %.2f s, %zu cells done\n",
                             static_cast<double>(now - last) / 1e6, static_cast<double>(now) / 1e9,
                             panel.run().cellsDone());
        }
        last = now;
    });
    const QString loadBefore = loadAverage();
    double cpuBefore = 0;
    QObject::connect(&panel.run(), &gui::TradeoffRun::finished, [&] {
        const double wall = static_cast<double>(clock.nsecsElapsed()) / 1e9;
        const sim::TradeoffMap& map = *panel.run().decision();
        std::printf(
            "tradeoff_map cells=%zu requests_per_cell=%lld passing=%zu wall_s=%.2f "
            "cpu_s=%.2f largest_gui_gap_ms=%.2f gaps_over_50ms=%d threads=%d load_before=%s "
            "load_after=%s\n",
            map.result.cells.size(),
            static_cast<long long>(map.result.cells.front().totals.requests), map.passing, wall,
            cpuSeconds() - cpuBefore, static_cast<double>(largestGap) / 1e6, longGaps,
            QThread::idealThreadCount(), qPrintable(loadBefore), qPrintable(loadAverage()));
        QCoreApplication::exit(0);
    });
    // Once the window has drawn, as a user would press Map.
    QTimer::singleShot(200, [&] {
        cpuBefore = cpuSeconds();
        clock.start();
        watchdog.start();
        if (!panel.startMap()) QCoreApplication::exit(1);
    });
    return QApplication::exec();
}
