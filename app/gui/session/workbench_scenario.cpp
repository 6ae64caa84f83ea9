// The Workbench's edited scenario: an edit held to the loader's rules before it replaces the
// scenario in use and restarts the run, saving it as a file `ratelab-cli run` reads back into
// the same scenario, and asking before an edited scenario is replaced unsaved.

#include <QDir>
#include <QFileInfo>
#include <QUndoCommand>

#include <algorithm>

#include "gui/session/workbench.h"
#include "gui/window/file_write.h"
#include "gui/window/resource_locator.h"
#include "sim/scenario/scenario_writer.h"

namespace ratelab::gui {

namespace {

std::vector<Diagnostic> errorsOf(const std::vector<Diagnostic>& diagnostics) {
    std::vector<Diagnostic> errors;
    std::copy_if(diagnostics.begin(), diagnostics.end(), std::back_inserter(errors),
                 [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; });
    return errors;
}

}  // namespace

// One applied edit: undone by putting the scenario before it back, redone by the one after it.
// Pushed once the edit is applied, so the push's own redo() has nothing to do.
class Workbench::ScenarioStep final : public QUndoCommand {
public:
    ScenarioStep(Workbench& workbench, sim::Scenario before, sim::Scenario after,
                 const QString& text)
        : QUndoCommand(text)
        , workbench_(workbench)
        , before_(std::move(before))
        , after_(std::move(after)) {}
    void undo() override { workbench_.applyScenario(before_); }
    void redo() override {
        if (pushed_) workbench_.applyScenario(after_);
        pushed_ = true;
    }

private:
    Workbench& workbench_;
    const sim::Scenario before_;
    const sim::Scenario after_;
    bool pushed_ = false;
};

bool Workbench::canEditScenario() const {
    return scenario_ && std::none_of(scenario_->actors.begin(), scenario_->actors.end(),
                                     [](const sim::Actor& a) { return a.recorded != nullptr; });
}

std::vector<Diagnostic> Workbench::editScenario(sim::Scenario edited) {
    if (!canEditScenario()) {
        return {{Diagnostic::Severity::Error, edited.file, 0, 0, "",
                 tr("there is no scenario to edit").toStdString()}};
    }
    // What a saved file of it would load into, or the loader's reasons for refusing that file.
    sim::ScenarioLoadResult back = sim::reloadScenario(edited);
    if (!back.ok()) return errorsOf(back.diagnostics);
    if (sim::scenarioJson(*back.scenario) == sim::scenarioJson(*scenario_)) return {};
    // The policies it will run with must take its policy changes, as `run` checks them.
    if (!document_.hasErrors() && !document_.policies().policies.empty()) {
        std::vector<Diagnostic> problems =
            errorsOf(sim::checkScenarioAgainstPolicy(*back.scenario, document_.policies()));
        if (problems.empty() && reference_)
            problems =
                errorsOf(sim::checkScenarioAgainstPolicy(*back.scenario, reference_->policies));
        if (!problems.empty()) return problems;
    }
    sim::Scenario before = *scenario_;
    applyScenario(*back.scenario);
    scenarioSteps_.push(
        new ScenarioStep(*this, std::move(before), std::move(*back.scenario), tr("scenario edit")));
    return {};
}

std::vector<Diagnostic> Workbench::scaleCrowds(double factor) {
    if (!canEditScenario()) return editScenario(sim::Scenario{});
    if (!(factor > 0)) {
        return {{Diagnostic::Severity::Error, scenario_->file, 0, 0, "",
                 tr("the crowds' factor must be above 0").toStdString()}};
    }
    sim::Scenario scaled = *scenario_;
    sim::scaleCrowds(scaled, factor);
    return editScenario(std::move(scaled));
}

void Workbench::applyScenario(sim::Scenario scenario) {
    scenario_ = std::move(scenario);
    runBuilt_ = false;
    emit scenarioChanged();
    const bool playing = session_.state() == RunState::Running;
    if (reset() && playing) session_.play();
}

bool Workbench::saveScenario(const QString& path) {
    if (!canEditScenario()) {
        ui_.showError(tr("Nothing to save"),
                      scenario_ ? tr("A replayed access log is not a scenario file. File > Fit a "
                                     "scenario to a log... writes one.")
                                : tr("Open a scenario first."));
        return false;
    }
    QString target = path;
    if (target.isEmpty()) {
        const QString suggested =
            scenarioPath_.isEmpty() || isEmbedded(scenarioPath_)
                ? QDir::current().filePath(QString::fromStdString(scenario_->name) + ".json")
                : scenarioPath_;
        target = ui_.chooseSaveFile(tr("Save scenario as"), suggested, tr("Scenarios (*.json)"));
        if (target.isEmpty()) return false;
    }
    sim::Scenario saved = *scenario_;
    // The policy keeps its file, named from the folder the scenario is written to.
    QString note;
    if (!saved.policyPath.empty()) {
        const QString policy = QString::fromStdString(saved.policyPath);
        if (isEmbedded(policy)) {
            saved.policy.clear();
            note =
                tr(" The policy it named is built into the workbench and is not named in the "
                   "file: run it with --policy.");
        } else {
            saved.policy =
                QDir::fromNativeSeparators(QFileInfo(target).absoluteDir().relativeFilePath(
                                               QFileInfo(policy).absoluteFilePath()))
                    .toStdString();
        }
    }
    const std::string text = sim::scenarioJson(saved);
    QString error;
    if (!writeWholeFile(target, text, error)) {
        ui_.showError(tr("Cannot save the scenario"), error);
        return false;
    }
    // From now on the scenario is the file's, as `run` reads it (the same traffic: the run goes
    // on).
    sim::ScenarioLoadResult back =
        sim::loadScenarioFile(QDir::toNativeSeparators(target).toStdString());
    if (!back.ok()) {
        QStringList lines;
        for (const Diagnostic& d : back.diagnostics)
            lines << QString::fromStdString(formatDiagnostic(d));
        ui_.showError(tr("Cannot read the saved scenario back"), lines.join('\n'));
        return false;
    }
    scenario_ = std::move(*back.scenario);
    scenarioPath_ = target;
    scenarioModified_ = false;
    scenarioSteps_.setClean();
    emit scenarioModifiedChanged(false);  // saved under another name, perhaps: say so anyway
    emit statusMessage(tr("Saved %1.").arg(QDir::toNativeSeparators(target)) + note);
    return true;
}

bool Workbench::settleScenarioEdits() {
    if (!scenarioModified_) return true;
    const QString name = tr("The scenario \"%1\"").arg(QString::fromStdString(scenario_->name));
    switch (ui_.askUnsavedChanges(name)) {
        case UserInteraction::UnsavedChoice::Save:
            return saveScenario();
        case UserInteraction::UnsavedChoice::Discard:
            return true;
        case UserInteraction::UnsavedChoice::Cancel:
            return false;
    }
    return false;
}

void Workbench::setScenarioModified(bool modified) {
    if (scenarioModified_ == modified) return;
    scenarioModified_ = modified;
    emit scenarioModifiedChanged(modified);
}

}  // namespace ratelab::gui
