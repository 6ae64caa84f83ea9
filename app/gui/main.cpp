// ratelab: the Qt workbench. Tune a rate-limit policy while an attack scenario plays against
// the production engine, watch the result live, and export what works.

#include <QApplication>
#include <QSettings>
#include <QTimer>

#include <cstdio>
#include <optional>

#include "gui/window/launch_options.h"
#include "gui/window/main_window.h"
#include "gui/plot/time_plot.h"
#include "gui/tradeoff/tradeoff_panel.h"
#include "gui/window/user_interaction.h"
#include "gui/session/workbench.h"

namespace {

// Prints what parsing the command line answered instead of options (help, the version, or a
// usage error) and returns the exit code.
int answerInstead(const QString& answer) {
    const bool informational = answer.contains("Usage:") || answer.startsWith("ratelab ");
    std::fprintf(informational ? stdout : stderr, "%s\n", qPrintable(answer));
    return informational ? 0 : 2;
}

}  // namespace

int main(int argc, char* argv[]) {
    QApplication::setApplicationName("ratelab");
    QApplication::setApplicationVersion(RATELAB_VERSION);
    QApplication::setOrganizationName("ratelab");

    // Help and the version need no display: they are answered before the QApplication exists,
    // which aborts on a machine without one. Everything else is parsed once it does, since it
    // takes Qt's own options (-platform, ...) out of the arguments first.
    QStringList raw;
    for (int i = 0; i < argc; ++i)
        raw << QString::fromLocal8Bit(argv[i]);
    for (const QString& a : raw.mid(1)) {
        if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") {
            QString answer;
            if (!ratelab::gui::parseLaunchOptions(raw, answer)) return answerInstead(answer);
            break;
        }
    }

    QApplication app(argc, argv);
    QString error;
    const auto options = ratelab::gui::parseLaunchOptions(QApplication::arguments(), error);
    if (!options) return answerInstead(error);
    ratelab::gui::TimePlot::setOpenGLRequested(options->openGL);

    // The layout and the recent files live in the user's settings (organization and application
    // "ratelab"). A scripted run (a screenshot, a timed quit) neither reads nor writes them, so
    // its picture is the same on every machine.
    const bool scripted = !options->screenshot.isEmpty() || options->quitAfterSeconds;
    std::optional<QSettings> settings;
    if (!scripted) settings.emplace();

    ratelab::gui::DialogInteraction ui;
    ratelab::gui::Workbench workbench(ui);
    ratelab::gui::MainWindow window(workbench, ui, settings ? &*settings : nullptr);
    ui.setParent(&window);
    if (!window.restoredLayout() || options->sizeGiven) window.resize(options->size);
    window.show();

    // In screenshot mode a file that cannot be opened still leaves a picture of the error state;
    // interactively the user has seen the dialog and carries on. The files open once the event
    // loop runs, after the screenshot's timer is set: an error's modal dialog would otherwise
    // wait for a click before the timer existed, and a headless run would never end. With
    // --tradeoff the picture waits for the map (scheduleScreenshotAndQuit falls back to its
    // timer when the map never starts).
    const ratelab::gui::TradeoffRun* map =
        options->tradeoff.empty() ? nullptr : &window.tradeoffPanel()->run();
    ratelab::gui::scheduleScreenshotAndQuit(*options, window, map);
    QTimer::singleShot(0, &window, [&] {
        const bool opened =
            ratelab::gui::applyLaunchOptions(*options, workbench, *window.runControls());
        if (!map) return;
        window.showTradeoff();
        window.tradeoffPanel()->setAxes(options->tradeoff);
        if (opened) window.tradeoffPanel()->startMap();
    });
    return QApplication::exec();
}
