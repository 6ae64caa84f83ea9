// ratelab: the Qt workbench. Tune a rate-limit policy while an attack scenario plays against
// the production engine, watch the result live, and export what works.

#include <QApplication>

#include <cstdio>

#include "launch_options.h"
#include "main_window.h"
#include "plot/time_plot.h"
#include "tradeoff_panel.h"
#include "user_interaction.h"
#include "workbench.h"

int main(int argc, char* argv[]) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("ratelab");
    QApplication::setApplicationVersion(RATELAB_VERSION);
    QApplication::setOrganizationName("ratelab");

    QString error;
    const auto options = ratelab::gui::parseLaunchOptions(QApplication::arguments(), error);
    if (!options) {
        const bool informational = error.contains("Usage:") || error.startsWith("ratelab ");
        std::fprintf(informational ? stdout : stderr, "%s\n", qPrintable(error));
        return informational ? 0 : 2;
    }
    ratelab::gui::TimePlot::setOpenGLRequested(options->openGL);

    ratelab::gui::DialogInteraction ui;
    ratelab::gui::Workbench workbench(ui);
    ratelab::gui::MainWindow window(workbench, ui);
    ui.setParent(&window);
    window.resize(options->size);
    window.show();

    // In screenshot mode a file that cannot be opened still leaves a picture of the error state;
    // interactively the user has seen the dialog and carries on.
    const bool opened =
        ratelab::gui::applyLaunchOptions(*options, workbench, *window.runControls());
    const ratelab::gui::TradeoffRun* map = nullptr;
    if (!options->tradeoff.empty()) {
        window.showTradeoff();
        window.tradeoffPanel()->setAxes(options->tradeoff);
        if (opened && window.tradeoffPanel()->startMap()) map = &window.tradeoffPanel()->run();
    }
    ratelab::gui::scheduleScreenshotAndQuit(*options, window, map);
    return QApplication::exec();
}
