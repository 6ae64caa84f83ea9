#include "gui/session/workbench.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "formats/import/import_common.h"
#include "formats/import/policy_import.h"
#include "gui/policy/target_export.h"
#include "gui/policy/validation_export.h"
#include "gui/window/diagnostics_text.h"
#include "gui/window/file_write.h"
#include "gui/window/locale_text.h"
#include "gui/window/resource_locator.h"
#include "ratelab/policy_file.h"
#include "ratelab/policy_tuning.h"
#include "sim/fit/log_fit.h"
#include "sim/log/recorded_traffic.h"
#include "sim/report/report.h"
#include "sim/scenario/scenario_writer.h"

#ifndef RATELAB_VERSION
#define RATELAB_VERSION "0.0.0"
#endif

namespace ratelab::gui {

namespace {

PolicyLoadResult loadPolicyAt(const QString& path, qint64 maxBytes) {
    if (!isEmbedded(path)) return loadPolicyFile(QDir::toNativeSeparators(path).toStdString());
    QByteArray text;
    QString error;
    if (!readWholeFile(path, maxBytes, text, error)) {
        PolicyLoadResult r;
        r.diagnostics.push_back(
            {Diagnostic::Severity::Error, path.toStdString(), 0, 0, "", error.toStdString()});
        return r;
    }
    return parsePolicyText(
        std::string_view(text.constData(), static_cast<std::size_t>(text.size())),
        path.toStdString());
}

sim::ScenarioLoadResult loadScenarioAt(const QString& path, qint64 maxBytes) {
    if (!isEmbedded(path))
        return sim::loadScenarioFile(QDir::toNativeSeparators(path).toStdString());
    QByteArray text;
    QString error;
    if (!readWholeFile(path, maxBytes, text, error)) {
        sim::ScenarioLoadResult r;
        r.diagnostics.push_back(
            {Diagnostic::Severity::Error, path.toStdString(), 0, 0, "", error.toStdString()});
        return r;
    }
    return sim::parseScenarioText(
        std::string_view(text.constData(), static_cast<std::size_t>(text.size())),
        path.toStdString());
}

struct AccessLogResult {
    std::shared_ptr<sim::RecordedTraffic> traffic;
    QString error;
};

// Runs on a pool thread; `progress` is called there too.
// Why reading `path` gave no traffic: an error, no readable line, or a cancel.
QString readingFailure(const QString& path, const sim::LogReading& reading) {
    if (reading.error) return QString::fromStdString(formatDiagnostic(*reading.error));
    if (reading.ended && reading.replayed == 0) {
        return QObject::tr("%1: no line could be read as a %2 access log (%3 lines)")
            .arg(path, QString::fromStdString(reading.format))
            .arg(localeCount(reading.lines));
    }
    return QObject::tr("%1: reading was cancelled").arg(path);
}

sim::ReplayInput logInput(const QString& path, const std::optional<sim::LogFormatOptions>& format) {
    sim::ReplayInput input;
    input.files = {QDir::toNativeSeparators(path).toStdString()};
    input.format = format;  // unset: detected
    return input;
}

AccessLogResult parseAccessLogFile(const QString& path,
                                   const std::optional<sim::LogFormatOptions>& format,
                                   const sim::LoadProgress& progress) {
    AccessLogResult out;
    sim::LogReading reading;
    out.traffic = sim::loadAccessLog(logInput(path, format), reading, progress);
    if (out.traffic && out.traffic->requests.empty()) out.traffic.reset();
    if (!out.traffic) out.error = readingFailure(path, reading);
    return out;
}

QString replayNotes(const sim::RecordedTraffic& t) {
    const sim::LogReading& r = t.reading;
    QString notes =
        QObject::tr("Replay of %1 (%2 format): %3 lines, %4 requests from %5 clients over %6 s.")
            .arg(QFileInfo(QString::fromStdString(t.fileName())).fileName(),
                 QString::fromStdString(r.format))
            .arg(localeCount(r.lines))
            .arg(localeCount(static_cast<std::int64_t>(t.requests.size())))
            .arg(localeCount(r.clients))
            .arg(localeFixed(static_cast<double>(t.spanNanos) / 1e9, 0));
    if (r.damagedCount > 0) {
        notes += ' ' + QObject::tr("%1 damaged lines were replayed with a warning.")
                           .arg(localeCount(r.damagedCount));
    }
    if (r.unparsedCount > 0) {
        QStringList lines;
        for (std::size_t i = 0; i < r.unparsed.size() && i < 10; ++i)
            lines << QString::number(r.unparsed[i].line);
        notes += ' ' + QObject::tr("%1 lines could not be parsed (lines %2%3).")
                           .arg(localeCount(r.unparsedCount))
                           .arg(lines.join(", "))
                           .arg(r.unparsedCount > 10 ? ", ..." : "");
    }
    return notes;
}

}  // namespace

Workbench::Workbench(UserInteraction& ui, WallClock clock, QObject* parent)
    : QObject(parent)
    , ui_(ui)
    , session_(std::move(clock))
    , cancelJobs_(std::make_shared<std::atomic<bool>>(false)) {
    // Models first: views connected later see them already updated within a frame.
    connect(&session_, &SimulationSession::runLoaded, this, [this](const RunShape& shape) {
        series_.reset(shape);
        clients_.setHighlighted(-1);
        log_.clear();
        if (!shape.comparing()) {
            comparedActors_.setComparison(nullptr);
            flips_.setComparison(nullptr);
        }
    });
    connect(&session_, &SimulationSession::frame, this, [this](const SimBatch& batch) {
        if (batch.trace) series_.addTrace(*batch.trace);
        series_.append(batch.samples, batch.samplesB);
        if (!batch.actors.empty() || batch.fresh) actors_.setRows(batch.actors);
        if (batch.fresh) {
            clients_.setRows(batch.clients ? *batch.clients : std::vector<ClientRow>());
            clients_.setReplaying(batch.clients != nullptr);
        } else if (batch.clients) {
            clients_.setRows(*batch.clients);
        }
        log_.append(batch.log);
        if (batch.comparison) {
            comparedActors_.setComparison(batch.comparison);
            flips_.setComparison(batch.comparison);
        }
    });
    connect(&session_, &SimulationSession::message, this, &Workbench::statusMessage);
    // A replayed log says when it is done and what the policy made of it.
    connect(&session_, &SimulationSession::stateChanged, this, [this](RunState state) {
        if (state != RunState::Finished || !scenario_ || canEditScenario()) return;
        sim::ClassCounters total;
        for (const sim::ActorRow& row : actors_.rows()) {
            total.offered += row.counters.offered;
            total.throttled += row.counters.throttled;
        }
        emit statusMessage(tr("Replay done: %1 requests, %2 throttled.")
                               .arg(localeCount(total.offered))
                               .arg(localeCount(total.throttled)));
    });
    connect(&session_, &SimulationSession::failed, this, [this](const QString& reason) {
        runBuilt_ = false;
        emit statusMessage(reason);
        ui_.showError(tr("The run could not start"), reason);
    });
    // An edit, or an undo or redo away from where the scenario was opened or saved, modifies it.
    connect(&scenarioSteps_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { setScenarioModified(!clean); });
    connect(&document_, &PolicyDocument::policyEdited, this, &Workbench::sendLiveEdit);
    connect(&document_, &PolicyDocument::reloaded, this, [this] { runBuilt_ = false; });
}

Workbench::~Workbench() {
    cancelJobs_->store(true);
}

void Workbench::setStoreChoice(const StoreChoice& choice) {
    if (store_ == choice) return;
    store_ = choice;
    runBuilt_ = false;
    const RunState s = session_.state();
    if (s == RunState::Running || s == RunState::Paused) {
        emit statusMessage(tr("The store applies when you press Reset."));
    } else if (scenario_) {
        reset();
    }
}

bool Workbench::settleUnsavedEdits() {
    if (!document_.isModified()) return true;
    switch (ui_.askUnsavedChanges(document_.displayName())) {
        case UserInteraction::UnsavedChoice::Save:
            return savePolicy();
        case UserInteraction::UnsavedChoice::Discard:
            return true;
        case UserInteraction::UnsavedChoice::Cancel:
            return false;
    }
    return false;
}

bool Workbench::loadPolicyFrom(const QString& path, bool explicitChoice) {
    PolicyLoadResult result = loadPolicyAt(path, kMaxJsonFileBytes);
    if (!result.ok()) {
        ui_.showError(
            tr("Cannot open the policy file"),
            tr("%1 was not loaded; the editor keeps its values.\n\n%2")
                .arg(QDir::toNativeSeparators(path), diagnosticsText(result.diagnostics)));
        return false;
    }
    document_.reset(std::move(*result.policies), path);
    policyChosen_ = explicitChoice;
    emit statusMessage(tr("Loaded policy %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool Workbench::openPolicy(const QString& path) {
    if (!settleUnsavedEdits()) return false;
    if (!loadPolicyFrom(path, true)) return false;
    if (scenario_ && session_.state() != RunState::Running) reset();
    return true;
}

bool Workbench::importLimits(const QString& path) {
    if (!settleUnsavedEdits()) return false;
    std::string error;
    const std::optional<std::string> text = formats::readImportFile(path.toStdString(), error);
    if (!text) {
        ui_.showError(tr("Cannot import"), tr("%1: %2").arg(QDir::toNativeSeparators(path),
                                                            QString::fromStdString(error)));
        return false;
    }
    QStringList kinds;
    for (formats::ImportKind kind : formats::importKinds())
        kinds << QString::fromUtf8(formats::importKindName(kind));
    const std::optional<formats::ImportKind> detected =
        formats::detectImportKind(path.toStdString(), *text);
    int chosen =
        detected
            ? static_cast<int>(kinds.indexOf(QString::fromUtf8(formats::importKindName(*detected))))
            : -1;
    if (!ui_.chooseImportKind(path, kinds, chosen) || chosen < 0) return false;
    formats::ImportResult imported =
        formats::importPolicies(formats::importKinds()[chosen], {path.toStdString()});
    if (!imported.policies) {
        ui_.showError(tr("Cannot import the limits"),
                      tr("%1 was not imported as %2; the editor keeps its values.\n\n%3")
                          .arg(QDir::toNativeSeparators(path), kinds[chosen],
                               diagnosticsText(imported.diagnostics)));
        return false;
    }
    if (!imported.diagnostics.empty()) ui_.showImportWarnings(kinds[chosen], imported.diagnostics);
    document_.reset(std::move(*imported.policies), QString());
    policyChosen_ = true;
    emit statusMessage(tr("Imported %1 limits from %2 (not saved yet)")
                           .arg(kinds[chosen], QDir::toNativeSeparators(path)));
    if (scenario_ && session_.state() != RunState::Running) reset();
    return true;
}

bool Workbench::savePolicy(const QString& path) {
    QString target = path.isEmpty() ? document_.path() : path;
    if (target.isEmpty() || isEmbedded(target)) {
        const QString suggested = document_.path().isEmpty() || isEmbedded(document_.path())
                                      ? QDir::current().filePath("policy.json")
                                      : document_.path();
        target = ui_.chooseSaveFile(tr("Save policy"), suggested, tr("Policy files (*.json)"));
        if (target.isEmpty()) return false;
    }
    const std::string text = savePolicyText(document_.policies());
    QString error;
    if (!writeWholeFile(target, text, error)) {
        ui_.showError(tr("Cannot save the policy"), error);
        return false;
    }
    document_.markSaved(target);
    policyChosen_ = true;
    emit statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(target)));
    return true;
}

bool Workbench::openScenario(const QString& path) {
    return settleScenarioEdits() && loadScenarioFrom(path);
}

bool Workbench::loadScenarioFrom(const QString& path) {
    sim::ScenarioLoadResult result = loadScenarioAt(path, kMaxJsonFileBytes);
    if (!result.ok()) {
        ui_.showError(
            tr("Cannot open the scenario"),
            tr("%1 was not loaded.\n\n%2")
                .arg(QDir::toNativeSeparators(path), diagnosticsText(result.diagnostics)));
        return false;
    }
    sim::Scenario scenario = std::move(*result.scenario);
    if (!policyChosen_ && !document_.isModified() && !scenario.policyPath.empty()) {
        const QString policy = QDir::cleanPath(QString::fromStdString(scenario.policyPath));
        if (policy != document_.path()) loadPolicyFrom(policy, false);
    } else if (!scenario.policyPath.empty() &&
               QFileInfo(QDir::cleanPath(QString::fromStdString(scenario.policyPath)))
                       .canonicalFilePath() != QFileInfo(document_.path()).canonicalFilePath()) {
        emit statusMessage(tr("The scenario names %1; keeping the policy in the editor.")
                               .arg(QString::fromStdString(scenario.policy)));
    }
    if (document_.policies().policies.empty() && scenario.policyPath.empty()) {
        // Nothing to run it with yet: the shipped default policy.
        const QString fallback = findDataFile(kDefaultPolicy);
        if (!fallback.isEmpty()) loadPolicyFrom(fallback, false);
    }
    const QString notes = QString::fromStdString(scenario.description);
    useScenario(std::move(scenario), path, notes);
    return true;
}

void Workbench::useScenario(sim::Scenario scenario, const QString& path, const QString& notes) {
    scenario_ = std::move(scenario);
    scenarioPath_ = path;
    scenarioNotes_ = notes;
    runBuilt_ = false;
    scenarioSteps_.clear();
    setScenarioModified(false);
    emit scenarioChanged();
    reset();
}

void Workbench::openAccessLog(const QString& path,
                              const std::optional<sim::LogFormatOptions>& format) {
    auto* watcher = new QFutureWatcher<AccessLogResult>(this);
    connect(watcher, &QFutureWatcher<AccessLogResult>::finished, this, [this, watcher, path] {
        AccessLogResult r = watcher->result();
        watcher->deleteLater();
        if (!r.traffic) {
            ui_.showError(tr("Cannot replay the access log"), r.error);
            emit accessLogOpened(path, false);
            return;
        }
        if (!settleScenarioEdits()) {  // asked now: the scenario may have been edited meanwhile
            emit accessLogOpened(path, false);
            return;
        }
        sim::Scenario scenario = sim::makeReplayScenario(r.traffic, kReplaySample);
        scenario.file = path.toStdString();
        scenario.title = tr("Replay of %1").arg(QFileInfo(path).fileName()).toStdString();
        useScenario(std::move(scenario), path, replayNotes(*r.traffic));
        emit accessLogOpened(path, true);
        emit statusMessage(
            tr("Read %1: %2 requests, clients: %3. Press Run to replay them.")
                .arg(QFileInfo(path).fileName())
                .arg(localeCount(static_cast<std::int64_t>(r.traffic->requests.size())))
                .arg(localeCount(r.traffic->reading.clients)));
    });
    emit statusMessage(tr("Reading %1 ...").arg(QDir::toNativeSeparators(path)));
    watcher->setFuture(QtConcurrent::run(parseAccessLogFile, path, format, logProgress()));
}

sim::LoadProgress Workbench::logProgress() {
    // Called on the pool thread: the fraction crosses to the GUI thread queued.
    QPointer<Workbench> self(this);
    return [self, cancel = cancelJobs_](std::int64_t done, std::int64_t total) {
        const double fraction =
            total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0;
        QMetaObject::invokeMethod(
            self.data(),
            [self, fraction] {
                if (self) emit self->accessLogProgress(fraction);
            },
            Qt::QueuedConnection);
        return !cancel->load();
    };
}

namespace {

struct FitJob {
    std::string text;  // the scenario file; empty on failure
    QString error;
    QStringList fidelity;  // per class: the replay's figures and the fitted run's
};

// "legit: requests 2,447 / 2,414, throttled 94 / 98, clients 45 / 45, throttled clients 1 / 1".
QStringList fidelityRows(const sim::FitResult& fit) {
    QStringList rows;
    if (fit.checks.empty()) return rows;
    const sim::FitCheck& check = fit.checks.front();
    auto pair = [](std::int64_t replayed, std::int64_t fitted) {
        return localeCount(replayed) + " / " + localeCount(fitted);
    };
    for (std::size_t c = 0; c < check.replayed.size(); ++c) {
        const sim::CheckFigures& r = check.replayed[c];
        const sim::CheckFigures& f = check.fitted[c];
        rows << QObject::tr("%1: requests %2, throttled %3, clients %4, throttled clients %5")
                    .arg(QString::fromStdString(fit.classes[c].name), pair(r.requests, f.requests),
                         pair(r.throttled, f.throttled), pair(r.clients, f.clients),
                         pair(r.throttledClients, f.throttledClients));
    }
    return rows;
}

// Runs on a pool thread.
FitJob fitLogFile(const QString& logPath, const std::optional<sim::LogFormatOptions>& format,
                  const PolicySet& policies, const std::string& policyRef,
                  const sim::LoadProgress& progress) {
    FitJob job;
    sim::FitOptions options;
    options.policy = policyRef;
    options.checks.push_back({"in use", policies});  // how faithful, shown before it is kept
    sim::LogReading reading;
    std::optional<sim::FitResult> fit =
        sim::fitScenario(logInput(logPath, format), policies, options, reading, progress);
    if (!fit) {
        job.error = readingFailure(logPath, reading);
        return job;
    }
    job.text = sim::scenarioJson(fit->scenario);
    job.fidelity = fidelityRows(*fit);
    return job;
}

}  // namespace

void Workbench::fitScenarioTo(const QString& logPath, const QString& scenarioPath,
                              const std::optional<sim::LogFormatOptions>& format) {
    const bool usable = !document_.hasErrors() && !document_.policies().policies.empty();
    const PolicySet policies = usable ? document_.policies() : sim::defaultFitPolicies();
    std::string policyRef;
    if (usable && !document_.path().isEmpty() && !isEmbedded(document_.path())) {
        policyRef = QDir::fromNativeSeparators(
                        QFileInfo(scenarioPath)
                            .absoluteDir()
                            .relativeFilePath(QFileInfo(document_.path()).absoluteFilePath()))
                        .toStdString();
    }
    auto* watcher = new QFutureWatcher<FitJob>(this);
    connect(watcher, &QFutureWatcher<FitJob>::finished, this,
            [this, watcher, scenarioPath, logPath] {
                FitJob r = watcher->result();
                watcher->deleteLater();
                if (r.text.empty()) {
                    ui_.showError(tr("Cannot fit a scenario"), r.error);
                    emit fitFinished(scenarioPath, false);
                    return;
                }
                if (!ui_.confirmFit(QFileInfo(logPath).fileName(), r.fidelity)) {
                    emit statusMessage(tr("The fitted scenario was not kept."));
                    emit fitFinished(scenarioPath, false);
                    return;
                }
                QString error;
                if (!writeWholeFile(scenarioPath, r.text, error)) {
                    ui_.showError(tr("Cannot fit a scenario"), error);
                    emit fitFinished(scenarioPath, false);
                    return;
                }
                const bool opened = openScenario(scenarioPath);
                emit fitFinished(scenarioPath, opened);
            });
    emit statusMessage(tr("Fitting a scenario to %1 ...").arg(QDir::toNativeSeparators(logPath)));
    watcher->setFuture(
        QtConcurrent::run(fitLogFile, logPath, format, policies, policyRef, logProgress()));
}

void Workbench::exportValidated(const QString& path) {
    if (!scenario_) {
        ui_.showError(tr("Cannot export"), tr("Open a scenario first: the export embeds its run."));
        emit exportFinished(path, false, tr("no scenario"));
        return;
    }
    if (document_.hasErrors()) {
        ui_.showError(
            tr("Cannot export"),
            tr("The policy set has errors:\n\n%1").arg(diagnosticsText(document_.diagnostics())));
        emit exportFinished(path, false, tr("the policy set has errors"));
        return;
    }
    auto* watcher = new QFutureWatcher<ValidatedExport>(this);
    connect(watcher, &QFutureWatcher<ValidatedExport>::finished, this, [this, watcher, path] {
        ValidatedExport r = watcher->result();
        watcher->deleteLater();
        if (r.text.empty()) {
            ui_.showError(tr("Cannot export"), QString::fromStdString(r.error));
            emit exportFinished(path, false, QString::fromStdString(r.error));
            return;
        }
        QString error;
        if (!writeWholeFile(path, r.text, error)) {
            ui_.showError(tr("Cannot export"), error);
            emit exportFinished(path, false, error);
            return;
        }
        const QString message = tr("Exported %1: %2 requests replayed, expectations %3")
                                    .arg(QDir::toNativeSeparators(path))
                                    .arg(localeCount(r.report.totals.requests))
                                    .arg(r.report.pass() ? tr("met") : tr("NOT met"));
        emit statusMessage(message);
        emit exportFinished(path, true, message);
    });
    emit statusMessage(tr("Exporting: replaying %1 with the edited policies ...")
                           .arg(QString::fromStdString(scenario_->name)));
    const std::string generator = std::string("ratelab ") + RATELAB_VERSION;
    watcher->setFuture(QtConcurrent::run(
        [scenario = *scenario_, policies = document_.policies(), generator, cancel = cancelJobs_] {
            return buildValidatedExport(scenario, policies, std::nullopt, generator, cancel.get());
        }));
}

bool Workbench::exportTo(formats::ExportTarget target) {
    const TargetExportOutcome outcome = exportPolicyTo(document_, target, ui_);
    emit statusMessage(outcome.message);
    return outcome.written;
}

bool Workbench::confirmDiscardChanges() {
    return settleUnsavedEdits() && settleScenarioEdits();
}

bool Workbench::reset() {
    if (!scenario_) {
        ui_.showError(tr("Nothing to run"), tr("Open a scenario or an access log first."));
        return false;
    }
    std::vector<Diagnostic> problems;
    for (const Diagnostic& d : document_.diagnostics()) {
        if (d.severity == Diagnostic::Severity::Error) problems.push_back(d);
    }
    if (problems.empty())
        problems = sim::checkScenarioAgainstPolicy(*scenario_, document_.policies());
    if (problems.empty() && reference_)
        problems = sim::checkScenarioAgainstPolicy(*scenario_, reference_->policies);
    if (hasErrors(problems)) {
        ui_.showError(tr("Cannot run"), tr("The scenario cannot run with these policies:\n\n%1")
                                            .arg(diagnosticsText(problems)));
        return false;
    }
    RunSetup setup;
    setup.scenario = *scenario_;
    setup.policies = document_.policies();
    setup.store = store_;
    if (reference_) {
        setup.compare = CompareSetup{reference_->policies, reference_->label.toStdString(),
                                     document_.displayName().toStdString()};
        if (store_.kind != StoreChoice::Kind::Memory) {
            // Each lane needs counters of its own; one Redis namespace would mix A's and B's.
            setup.store = StoreChoice{};
            emit statusMessage(
                tr("Compare mode runs A and B on memory stores of their own; the Redis store "
                   "applies again when you leave compare mode."));
        }
    }
    runPolicies_ = setup.policies;
    structuralEdit_ = false;
    session_.load(std::move(setup));
    runBuilt_ = true;
    return true;
}

void Workbench::run() {
    const RunState s = session_.state();
    // A run that has not started yet takes every edit: rebuild it rather than play the old one.
    const bool staleReady = structuralEdit_ && s == RunState::Ready;
    if (!runBuilt_ || staleReady || s == RunState::Empty || s == RunState::Failed ||
        s == RunState::Finished) {
        if (!reset()) return;
    }
    session_.play();
}

void Workbench::pause() {
    session_.pause();
}

void Workbench::step() {
    const bool staleReady = structuralEdit_ && session_.state() == RunState::Ready;
    if ((!runBuilt_ || staleReady) && !reset()) return;
    session_.step();
}

void Workbench::setSpeed(double multiple) {
    session_.setSpeed(multiple);
}

void Workbench::sendLiveEdit(std::size_t policyIndex) {
    if (!runBuilt_ || document_.hasErrors()) return;
    const PolicySet& running = runPolicies_;
    const PolicySet& edited = document_.policies();
    if (policyIndex >= running.policies.size() || policyIndex >= edited.policies.size()) return;
    if (!canRetune(running.policies[policyIndex], edited.policies[policyIndex])) {
        structuralEdit_ = true;
        emit statusMessage(
            tr("This change alters how requests are matched or keyed: it applies "
               "when you press Reset."));
        return;
    }
    session_.retune(policyIndex, tuningOf(edited.policies[policyIndex]));
}

}  // namespace ratelab::gui
