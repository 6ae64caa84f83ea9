#pragma once

// Shared pieces of the workbench tests: a UserInteraction that records instead of showing
// dialogs, a manual wall clock for pacing, and scenario and policy files written on the fly.

#include <QTemporaryDir>
#include <QUrl>
#include <QtTest>

#include <atomic>
#include <memory>
#include <string>

#include "ratelab/limit.h"
#include "simulation_worker.h"
#include "user_interaction.h"

namespace ratelab::guitest {

/// Records every error, message and URL handed to the desktop; answers questions from a script.
class RecordingInteraction final : public gui::UserInteraction {
public:
    struct Error {
        QString title;
        QString text;
    };
    QList<Error> errors;
    QList<Error> information;  ///< showInformation's, same shape
    QList<QUrl> openedUrls;    ///< never opened: offscreen tests launch nothing
    UnsavedChoice unsavedAnswer = UnsavedChoice::Cancel;
    int unsavedQuestions = 0;
    QString openAnswer;
    QString saveAnswer;
    int saveQuestions = 0;
    QString saveSuggested;  // what the last save question proposed
    struct ExportQuestion {
        QString target;
        QStringList notes;
    };
    QList<ExportQuestion> exportQuestions;
    bool exportAnswer = false;
    gui::LogFormatChoice logFormatAnswer;  // detection unless a test says otherwise
    bool logFormatAccepted = true;
    int logFormatQuestions = 0;

    void showError(const QString& title, const QString& text) override {
        errors.append({title, text});
    }
    void showInformation(const QString& title, const QString& text) override {
        information.append({title, text});
    }
    bool openExternally(const QUrl& url) override {
        openedUrls.append(url);
        return true;
    }
    UnsavedChoice askUnsavedChanges(const QString&) override {
        ++unsavedQuestions;
        return unsavedAnswer;
    }
    QString chooseOpenFile(const QString&, const QString&, const QString&) override {
        return openAnswer;
    }
    QString chooseSaveFile(const QString&, const QString& suggested, const QString&) override {
        ++saveQuestions;
        saveSuggested = suggested;
        return saveAnswer;
    }
    bool confirmExport(const QString& target, const QStringList& notes) override {
        exportQuestions.append({target, notes});
        return exportAnswer;
    }
    bool chooseLogFormat(const QString&, gui::LogFormatChoice& choice) override {
        ++logFormatQuestions;
        if (logFormatAccepted) choice = logFormatAnswer;
        return logFormatAccepted;
    }
};

/// A wall clock the test moves by hand. Thread-safe: the worker reads it.
class ManualClock {
public:
    gui::WallClock clock() {
        auto now = now_;
        return [now] { return now->load(); };
    }
    void advance(Nanos by) { now_->fetch_add(by); }

private:
    std::shared_ptr<std::atomic<Nanos>> now_ = std::make_shared<std::atomic<Nanos>>(1);
};

/// Writes `text` to `name` inside `dir` and returns the path.
inline QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size()) {
        qFatal("cannot write %s", qPrintable(path));
    }
    return path;
}

/// A policy file with one policy, keyed on the peer address.
inline QByteArray policyJson(const char* algorithm, int capacity, double refillPerSecond,
                             int windowMs = 1000) {
    return QStringLiteral(R"({
  "version": 1,
  "policies": [
    {
      "name": "api",
      "match": { "path_prefix": "/" },
      "algorithm": "%1",
      "capacity": %2,
      "refill_per_second": %3,
      "window_ms": %4,
      "key": { "source": "peer" }
    }
  ]
}
)")
        .arg(algorithm)
        .arg(capacity)
        .arg(refillPerSecond)
        .arg(windowMs)
        .toUtf8();
}

/// One attacker at `ratePerSecond` from one IPv4 address, plus 20 legit users at 0.5/s.
inline QByteArray attackScenarioJson(const char* name, double ratePerSecond, int seconds,
                                     const QByteArray& events = "[]") {
    return QStringLiteral(R"({
  "name": "%1",
  "title": "A single address floods the API",
  "description": "One client at %2 requests per second against twenty ordinary users.",
  "seed": 11,
  "duration_s": %3,
  "sample_ms": 1000,
  "actors": [
    { "name": "users", "class": "legit", "count": 20,
      "arrival": { "kind": "poisson", "rate_per_s": 0.5 },
      "request": { "method": "GET", "path": "/api/items" },
      "identity": { "peer": { "kind": "ipv4_pool", "cidr": "198.51.100.0/24" } } },
    { "name": "flood", "class": "attacker", "count": 1,
      "arrival": { "kind": "constant", "rate_per_s": %2 },
      "request": { "method": "GET", "path": "/api/items" },
      "identity": { "peer": { "kind": "ipv4", "address": "203.0.113.7" } } }
  ],
  "events": %4,
  "expect": [ { "metric": "attacker.allowed_per_s", "max": 1000 } ]
}
)")
        .arg(name)
        .arg(ratePerSecond)
        .arg(seconds)
        .arg(QString::fromUtf8(events))
        .toUtf8();
}

}  // namespace ratelab::guitest

namespace ratelab::guitest {

/// Waits, on frames of `session`, until `done()` holds; false after `timeoutMs` of wall time.
/// Event-driven (QSignalSpy), never a sleep.
template <class Session, class Done>
bool waitForFrames(Session& session, Done done, int timeoutMs = 30000) {
    QSignalSpy frames(&session, &Session::frame);
    QElapsedTimer elapsed;
    elapsed.start();
    while (!done()) {
        const qint64 left = timeoutMs - elapsed.elapsed();
        if (left <= 0) return false;
        frames.wait(static_cast<int>(left));
    }
    return true;
}

}  // namespace ratelab::guitest
