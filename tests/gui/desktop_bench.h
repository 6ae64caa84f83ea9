#pragma once

// A workbench window for the desktop suites (tst_workbench_desktop, tst_workbench_undo): the
// policy editor's fields and the window's actions by name, and typing as a user types.

#include <QAbstractSpinBox>
#include <QAction>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QtTest>

#include "policy_editor.h"
#include "window_fixture.h"

namespace ratelab::guitest {

struct Bench : WindowBench {
    explicit Bench(QSettings* settings = nullptr, gui::WallClock clock = gui::steadyNanos)
        : WindowBench(std::move(clock), settings) {}

    gui::PolicyEditor* editor() { return window.policyEditor(); }
    QSpinBox* capacity() { return editor()->findChild<QSpinBox*>("capacitySpin"); }
    QDoubleSpinBox* refill() { return editor()->findChild<QDoubleSpinBox*>("refillSpin"); }
    const Policy& policy() { return workbench.document().policies().policies.front(); }
    QAction* action(const char* name) {
        QAction* a = window.findChild<QAction*>(name);
        if (!a) qFatal("no action %s", name);
        return a;
    }
    QString undoText() { return action("undoAction")->text().remove('&'); }
    QString redoText() { return action("redoAction")->text().remove('&'); }
    /// Opens through File > Open ... as the user does: the dialog answers `path`.
    void openThroughMenu(const char* actionName, const QString& path) {
        ui.openAnswer = path;
        action(actionName)->trigger();
    }
};

/// Types `text` into a spin box over what it holds, then Enter, as a user does.
void typeInto(QAbstractSpinBox* box, const QString& text) {
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
    QTest::keyClick(box, Qt::Key_Return);
}

}  // namespace ratelab::guitest
