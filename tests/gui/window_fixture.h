#pragma once

// The frame of the suites that drive the workbench through its window: a Workbench, its
// MainWindow and a RecordingInteraction in place of the dialogs. Each suite adds its own
// shortcuts (and shows or sizes the window as it needs) in a struct derived from this one.

#include <QSettings>

#include "gui_fixture.h"
#include "main_window.h"
#include "workbench.h"

namespace ratelab::guitest {

struct WindowBench {
    /// `settings`: where the window remembers recent files and its layout (none by default).
    explicit WindowBench(gui::WallClock clock = gui::steadyNanos, QSettings* settings = nullptr)
        : workbench(ui, std::move(clock)), window(workbench, ui, settings) {}

    RecordingInteraction ui;
    gui::Workbench workbench;
    gui::MainWindow window;
};

}  // namespace ratelab::guitest
