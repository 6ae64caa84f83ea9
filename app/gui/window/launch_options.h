#pragma once

// The workbench's command line: what to open, whether to run, and the screenshot mode used for
// the docs and tests: `ratelab --scenario S --policy P --run --screenshot OUT.png --quit-after 5`.
// `--compare B.json` opens in compare mode: the policy opened (A) beside B, in the editor.

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "sim/decide/sweep.h"

class QWidget;

namespace ratelab::gui {

class RunControls;
class TradeoffRun;
class Workbench;

struct LaunchOptions {
    QString scenario;   ///< empty: the default scenario
    QString policy;     ///< empty: the scenario's policy, else the default policy
    QString accessLog;  ///< replayed instead of a scenario when set
    QString compare;    ///< policy B of compare mode (A: the policy opened); empty: no compare
    bool run = false;
    double speed = 1;  ///< times real time; <= 0 as fast as possible
    QString store;     ///< "memory" or a redis:// URL; empty: memory
    /// --tradeoff FIELD=FROM:TO:STEP, once or twice: open the trade-off map and start it.
    std::vector<sim::SweepAxis> tradeoff;
    QString screenshot;
    std::optional<double> quitAfterSeconds;
    bool openGL = false;
    QSize size{1600, 1000};
    bool sizeGiven = false;  ///< --size was given: it wins over the remembered layout
};

/// Parses the arguments; on a usage error returns nullopt with `error` set.
std::optional<LaunchOptions> parseLaunchOptions(const QStringList& arguments, QString& error);

/// Opens what the options name (or the defaults), enters compare mode when asked, applies the
/// store and speed, and starts the run when asked. Returns false when a file could not be
/// opened (the error was shown).
bool applyLaunchOptions(const LaunchOptions& options, Workbench& workbench, RunControls& controls);

/// Schedules the screenshot and the exit: after `quitAfterSeconds` (3 s when only a
/// screenshot is asked for), grabs `window` into the PNG and quits the application with exit
/// code 0, or 1 when the picture cannot be written. With `map` (a trade-off map that started),
/// the picture is taken once the map is complete, or at `quitAfterSeconds` if that comes first.
void scheduleScreenshotAndQuit(const LaunchOptions& options, QWidget& window,
                               const TradeoffRun* map = nullptr);

}  // namespace ratelab::gui
