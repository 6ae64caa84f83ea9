#pragma once

// The workbench's state and what the user can do with it: the policy being edited, the
// scenario in use, the simulation session and the models the views show. Opening, saving and
// exporting files live here too, with every question and error going through UserInteraction.
// Widgets come separately (MainWindow): this class creates none.

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "formats/policy_export.h"
#include "gui/compare/compare_actor_model.h"
#include "gui/compare/compare_flips_model.h"
#include "gui/policy/policy_document.h"
#include "gui/session/actor_table_model.h"
#include "gui/session/client_table_model.h"
#include "gui/session/event_log_model.h"
#include "gui/session/run_series.h"
#include "gui/session/simulation_session.h"
#include "gui/session/store_choice.h"
#include "gui/window/user_interaction.h"
#include "sim/log/recorded_traffic.h"
#include "sim/scenario/scenario.h"

namespace ratelab::gui {

/// GUI thread only. Long work (runs, access-log parsing, validated exports) happens on other
/// threads; every method here returns promptly.
class Workbench : public QObject {
    Q_OBJECT

public:
    /// Files larger than this are refused by the policy and scenario readers (the JSON layer
    /// refuses them too; this keeps a mistaken pick of a huge file from being read at all).
    static constexpr qint64 kMaxJsonFileBytes = 16 << 20;
    /// Virtual time per sample of a replayed access log.
    static constexpr Nanos kReplaySample = kNanosPerSecond;

    explicit Workbench(UserInteraction& ui, WallClock clock = steadyNanos,
                       QObject* parent = nullptr);
    ~Workbench() override;

    PolicyDocument& document() { return document_; }
    SimulationSession& session() { return session_; }
    RunSeries& series() { return series_; }
    /// The actors under the editor's policies (B's in compare mode).
    ActorTableModel& actors() { return actors_; }
    /// A replayed log's clients (the busiest kTopClients, then the others), under the editor's
    /// policies; replaying() tells whether the run replays a log.
    ClientTableModel& clients() { return clients_; }
    /// Draws a replayed log's client (ClientRow::instance of a listed client) over the charts'
    /// totals: its allowed and throttled requests per sample, as the run counted them (the
    /// worker keeps every client's counts per interval: no second replay), named after its key;
    /// in compare mode in both lanes. Another client moves the highlight; -1, or a run that
    /// replays no log, clears it. Returns promptly; the values follow with the next frames.
    void highlightClient(std::int64_t instance);
    std::int64_t highlightedClient() const { return series_.highlightedClient(); }
    EventLogModel& log() { return log_; }
    /// Compare mode: per actor A, B and B - A; the most affected instances and actors.
    CompareActorModel& comparedActors() { return comparedActors_; }
    CompareFlipsModel& flips() { return flips_; }

    bool hasScenario() const { return scenario_.has_value(); }
    /// REQUIRES: hasScenario().
    const sim::Scenario& scenario() const { return *scenario_; }
    const QString& scenarioPath() const { return scenarioPath_; }
    /// A paragraph about the scenario: its description, or how a replayed log was read.
    const QString& scenarioNotes() const { return scenarioNotes_; }

    const StoreChoice& storeChoice() const { return store_; }
    /// The store for the next run. Applies at once unless a run is under way (then on Reset).
    void setStoreChoice(const StoreChoice& choice);

    /// Opens a policy file into the editor. Unsaved edits are saved or discarded only as the
    /// user chooses. A file with errors is reported (FILE:LINE:COLUMN each) and the editor keeps
    /// what it had. Returns true when the file was loaded.
    bool openPolicy(const QString& path);
    /// Imports another product's rate limits (formats/import/policy_import.h) from `path` into
    /// the editor as a new, unsaved set: the kind detected from the file and confirmed or
    /// overridden by the user, the import's warnings shown, its errors reported (FILE:LINE:COLUMN
    /// each) with the editor unchanged. Reads a configuration file on the GUI thread, as
    /// openPolicy does (at most 16 MiB). Returns true when the policies were loaded.
    bool importLimits(const QString& path);
    /// Writes the document to `path` (empty: where it came from; an embedded or new document
    /// asks where). Returns true when written.
    bool savePolicy(const QString& path = {});
    /// Opens a scenario (an edited one is saved or discarded first, as the user chooses). When
    /// the user has not chosen a policy file and has no unsaved edits, the policy the scenario
    /// names is loaded too. Errors are reported; the previous scenario stays. Returns true when
    /// the scenario was loaded.
    bool openScenario(const QString& path);
    /// The scenario in use can be edited: there is one, and it is not a replayed access log.
    bool canEditScenario() const;
    /// The scenario was edited (editScenario) and not saved since.
    bool isScenarioModified() const { return scenarioModified_; }
    /// Replaces the scenario in use with an edited one, as the loader reads it back from the
    /// file scenarioJson() writes, and restarts the run from it as opening a scenario does
    /// (playing on when it was playing). An edit the loader would refuse, or that the editor's
    /// policies cannot run (a policy_change naming no policy), changes nothing: its errors are
    /// returned, with the loader's messages and JSON pointers. REQUIRES: canEditScenario().
    std::vector<Diagnostic> editScenario(sim::Scenario edited);
    /// Multiplies the count of every crowd of the scenario (sim::scaleCrowds: each actor of more
    /// than one instance, by sim::scaledCrowdCount) `factor` times, as one edit through
    /// editScenario(); single actors keep theirs. Returns the loader's errors (a count past its
    /// bound) with nothing changed. REQUIRES: canEditScenario(), factor > 0.
    std::vector<Diagnostic> scaleCrowds(double factor);
    /// The applied scenario edits (editScenario), for the scenario editor's Undo and Redo; each
    /// step restores the scenario and restarts the run as an edit does. Emptied when another
    /// scenario or log is opened; clean where the scenario was opened or saved.
    QUndoStack& scenarioSteps() { return scenarioSteps_; }
    /// Writes the scenario (scenarioJson()) to `path`, its policy named from `path`'s folder,
    /// and uses it as read back from there; an empty `path` asks where. Returns true when
    /// written.
    bool saveScenario(const QString& path = {});
    /// Parses an access log on a pool thread (gzip or not; `format` as the user stated it, or
    /// detected when unset: combined, common, csv, nginx's main format, caddy), then replays it
    /// like a scenario. accessLogProgress() reports the parsing; accessLogOpened() follows.
    void openAccessLog(const QString& path,
                       const std::optional<sim::LogFormatOptions>& format = std::nullopt);
    /// Fits a scenario to an access log on a pool thread (sim/fit/log_fit.h), keyed by the edited
    /// policies' rules (the engine's default key when they have errors), writes it to
    /// `scenarioPath` and opens it. accessLogProgress() reports the parsing; fitFinished()
    /// follows.
    void fitScenarioTo(const QString& logPath, const QString& scenarioPath,
                       const std::optional<sim::LogFormatOptions>& format = std::nullopt);
    /// Replays the scenario with the edited policies on a pool thread and writes the validated
    /// policy to `path`. exportFinished() follows.
    void exportValidated(const QString& path);
    /// Writes the edited policies as `target`'s configuration where the user chooses; errors,
    /// refusals and approximations are shown first (target_export.h). True when written.
    bool exportTo(formats::ExportTarget target);
    /// Before the window closes: true when there are no unsaved edits, or the user saved or
    /// discarded them.
    bool confirmDiscardChanges();

    /// Compare mode: a fixed reference A runs beside the editor's policies, B, on the very same
    /// requests in the same worker run; edits to B are tuned live as ever, A never changes.
    /// Here A is the editor's policy set as loaded or saved, so every edit is compared with
    /// where the user started. Returns false (and says why) when there is no policy yet.
    bool compareWithLoaded();
    /// Compare mode with the file `path` as B: A is the policy set in the editor (as loaded or
    /// saved, once unsaved edits are saved or discarded as the user chooses), and `path` is
    /// opened into the editor. A file with errors is reported like openPolicy's
    /// (FILE:LINE:COLUMN each) and nothing changes. Returns true when comparing.
    bool compareAgainst(const QString& path);
    /// Back to a run of the editor's policies alone.
    void leaveCompare();
    bool isComparing() const { return reference_.has_value(); }
    /// How the banner and legends name A. REQUIRES: isComparing().
    const QString& referenceLabel() const { return reference_->label; }

    /// Builds a fresh run from the scenario, the edited policies and the store choice.
    /// Returns false (and reports why) when there is no scenario or the policies have errors.
    bool reset();
    /// Runs; builds a fresh run first when none is ready (nothing built, finished, failed).
    void run();
    void pause();
    void step();
    /// Times real time (1..1000), or <= 0 for as fast as possible.
    void setSpeed(double multiple);

signals:
    void scenarioChanged();
    /// The scenario became edited, or was saved (perhaps under another name), or an edited one
    /// was replaced.
    void scenarioModifiedChanged(bool modified);
    void statusMessage(const QString& text);
    void accessLogOpened(const QString& path, bool ok);
    /// While a log is parsed: the fraction of its bytes read, 0..1.
    void accessLogProgress(double fraction);
    void fitFinished(const QString& scenarioPath, bool ok);
    /// Compare mode was entered, left, or given another reference.
    void compareChanged(bool comparing);
    void exportFinished(const QString& path, bool ok, const QString& message);

private:
    sim::LoadProgress logProgress();
    bool loadPolicyFrom(const QString& path, bool explicitChoice);
    bool settleUnsavedEdits();
    bool settleScenarioEdits();
    bool loadScenarioFrom(const QString& path);
    void setScenarioModified(bool modified);
    void sendLiveEdit(std::size_t policyIndex);
    void useScenario(sim::Scenario scenario, const QString& path, const QString& notes);
    /// Makes `scenario` (read back by the loader, checked against the policies) the one in use
    /// and restarts the run, playing on when it was playing.
    void applyScenario(sim::Scenario scenario);
    class ScenarioStep;
    /// Rebuilds the run for a new reference (or none), playing on when it was playing.
    void restartForCompare();

    struct Reference {
        PolicySet policies;
        QString label;
    };

    UserInteraction& ui_;
    PolicyDocument document_;
    SimulationSession session_;
    RunSeries series_;
    ActorTableModel actors_;
    ClientTableModel clients_;
    EventLogModel log_;
    CompareActorModel comparedActors_;
    CompareFlipsModel flips_;

    std::optional<sim::Scenario> scenario_;
    std::optional<Reference> reference_;  // compare mode's A
    QString scenarioPath_;
    QString scenarioNotes_;
    StoreChoice store_;
    bool scenarioModified_ = false;
    QUndoStack scenarioSteps_;
    bool policyChosen_ = false;    // the user opened a policy file: scenarios do not replace it
    bool runBuilt_ = false;        // a run reflecting the current inputs was sent to the worker
    PolicySet runPolicies_;        // the policies the current run started with
    bool structuralEdit_ = false;  // an edit the running engine cannot take waits for Reset
    std::shared_ptr<std::atomic<bool>> cancelJobs_;
};

}  // namespace ratelab::gui
