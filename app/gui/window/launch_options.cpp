#include "gui/window/launch_options.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QPixmap>
#include <QTimer>
#include <QWidget>

#include <cstdio>

#include "ratelab/redis_url.h"
#include "gui/window/resource_locator.h"
#include "gui/window/run_controls.h"
#include "gui/tradeoff/tradeoff_run.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

std::optional<LaunchOptions> parseLaunchOptions(const QStringList& arguments, QString& error) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QCoreApplication::tr("ratelab workbench: tune a rate-limit policy while an attack plays"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption scenario("scenario", "Scenario file to open.", "S");
    const QCommandLineOption policy("policy", "Policy file to open (overrides the scenario's).",
                                    "P");
    const QCommandLineOption log("access-log", "Access log to replay instead of a scenario.",
                                 "LOG");
    const QCommandLineOption compare(
        "compare",
        "Compare mode: policy B (opened in the editor, tuned live) beside the policy opened "
        "(A, fixed) on the very same requests.",
        "B.json");
    const QCommandLineOption run("run", "Start the run at once.");
    const QCommandLineOption speed(
        "speed", "Times real time, 1 to 1000, or 'max' for as fast as possible (default 1).", "X",
        "1");
    const QCommandLineOption store("store", "memory (default) or redis://HOST:PORT[/DB].", "STORE");
    const QCommandLineOption shot("screenshot", "Save a picture of the window to FILE.png.",
                                  "FILE");
    const QCommandLineOption quit("quit-after", "Quit after SECONDS (after the screenshot).",
                                  "SECONDS");
    const QCommandLineOption gl("opengl",
                                "Draw chart lines with OpenGL where the platform has it.");
    const QCommandLineOption size("size", "Window size, WIDTHxHEIGHT (default 1600x1000).", "WxH");
    const QCommandLineOption tradeoff(
        "tradeoff",
        "Open the trade-off map and start it: [POLICY.]FIELD=FROM:TO:STEP, once or twice "
        "(FIELD as ratelab-cli sweep --vary takes it).",
        "AXIS");
    parser.addOptions(
        {scenario, policy, log, compare, run, speed, store, shot, quit, gl, size, tradeoff});
    if (!parser.parse(arguments)) {
        error = parser.errorText();
        return std::nullopt;
    }
    if (parser.isSet("help")) {
        error = parser.helpText();
        return std::nullopt;
    }
    if (parser.isSet("version")) {
        error = QCoreApplication::applicationName() + " " + QCoreApplication::applicationVersion();
        return std::nullopt;
    }
    LaunchOptions o;
    o.scenario = parser.value(scenario);
    o.policy = parser.value(policy);
    o.accessLog = parser.value(log);
    o.compare = parser.value(compare);
    o.run = parser.isSet(run);
    const QString s = parser.value(speed);
    bool ok = true;
    if (s == "max") {
        o.speed = 0;
    } else {
        o.speed = s.toDouble(&ok);
        if (!ok || o.speed < 1 || o.speed > 1000) {
            error = QCoreApplication::tr("--speed: \"%1\" is not a number from 1 to 1000 or 'max'")
                        .arg(s);
            return std::nullopt;
        }
    }
    o.store = parser.value(store);
    std::string why;
    if (!o.store.isEmpty() && o.store != "memory" && !parseRedisUrl(o.store.toStdString(), &why)) {
        error = QCoreApplication::tr("--store: \"%1\" is neither memory nor a Redis URL: %2")
                    .arg(QString::fromStdString(redactRedisUrl(o.store.toStdString())),
                         QString::fromStdString(why));
        return std::nullopt;
    }
    o.screenshot = parser.value(shot);
    if (parser.isSet(quit)) {
        const double q = parser.value(quit).toDouble(&ok);
        if (!ok || q < 0 || q > 86400) {
            error = QCoreApplication::tr("--quit-after: \"%1\" is not a number of seconds")
                        .arg(parser.value(quit));
            return std::nullopt;
        }
        o.quitAfterSeconds = q;
    }
    o.openGL = parser.isSet(gl);
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split('x');
        const int w = wh.size() == 2 ? wh[0].toInt() : 0;
        const int h = wh.size() == 2 ? wh[1].toInt() : 0;
        if (w < 400 || h < 300 || w > 8000 || h > 8000) {
            error = QCoreApplication::tr("--size: \"%1\" is not WIDTHxHEIGHT (400x300 or more)")
                        .arg(parser.value(size));
            return std::nullopt;
        }
        o.size = QSize(w, h);
        o.sizeGiven = true;
    }
    const QStringList axes = parser.values(tradeoff);
    if (axes.size() > 2) {
        error = QCoreApplication::tr("--tradeoff: a map varies one or two fields, found %1")
                    .arg(axes.size());
        return std::nullopt;
    }
    for (const QString& text : axes) {
        std::optional<sim::SweepAxis> axis =
            sim::parseSweepAxis(text.toStdString(), why, "--tradeoff");
        if (!axis) {
            error = QString::fromStdString(why);
            return std::nullopt;
        }
        o.tradeoff.push_back(std::move(*axis));
    }
    if (o.tradeoff.size() == 2 && o.tradeoff[0].field == o.tradeoff[1].field) {
        error = QCoreApplication::tr("--tradeoff: both axes vary %1")
                    .arg(QString::fromStdString(o.tradeoff[0].field));
        return std::nullopt;
    }
    if (!parser.positionalArguments().isEmpty()) {
        error = QCoreApplication::tr("unexpected argument \"%1\"")
                    .arg(parser.positionalArguments().first());
        return std::nullopt;
    }
    return o;
}

bool applyLaunchOptions(const LaunchOptions& options, Workbench& workbench, RunControls& controls) {
    controls.selectSpeed(options.speed);
    if (!options.store.isEmpty() && options.store != "memory") {
        StoreChoice choice;
        choice.kind = StoreChoice::Kind::Redis;
        choice.redisUrl = options.store.toStdString();
        workbench.setStoreChoice(choice);
    }
    // The policy first, so that the scenario does not replace it with the one it names.
    // Without --policy: the default policy, except for a scenario, which may name its own
    // (Workbench::openScenario falls back to the default when it names none).
    const QString policy =
        options.policy.isEmpty() && (options.scenario.isEmpty() || !options.accessLog.isEmpty())
            ? findDataFile(kDefaultPolicy)
            : options.policy;
    if (!policy.isEmpty() && !workbench.openPolicy(policy)) return false;
    // B goes into the editor once A is there: A is the policy opened, or the one the scenario
    // names, so for a scenario B comes after it.
    const bool compare = !options.compare.isEmpty();
    if (!options.accessLog.isEmpty()) {
        if (compare && !workbench.compareAgainst(options.compare)) return false;
        if (options.run) {
            QObject::connect(&workbench, &Workbench::accessLogOpened, &workbench,
                             [&workbench](const QString&, bool ok) {
                                 if (ok) workbench.run();
                             });
        }
        workbench.openAccessLog(options.accessLog);
        return true;
    }
    const QString scenario =
        options.scenario.isEmpty() ? findDataFile(kDefaultScenario) : options.scenario;
    // Nothing shipped: the user opens a scenario later.
    if (!scenario.isEmpty() && !workbench.openScenario(scenario)) return false;
    if (compare && !workbench.compareAgainst(options.compare)) return false;
    if (options.run && workbench.hasScenario()) workbench.run();
    return true;
}

void scheduleScreenshotAndQuit(const LaunchOptions& options, QWidget& window,
                               const TradeoffRun* map) {
    if (options.screenshot.isEmpty() && !options.quitAfterSeconds) return;
    const QString path = options.screenshot;
    auto grabAndQuit = [&window, path] {
        int code = 0;
        if (!path.isEmpty()) {
            const QPixmap picture = window.grab();
            if (!picture.save(path, "PNG")) {
                std::fprintf(stderr, "ratelab: cannot write the screenshot to %s\n",
                             qPrintable(path));
                code = 1;
            }
        }
        QCoreApplication::exit(code);
    };
    if (map) {
        // Queued: the map's last cell is drawn before the picture is taken.
        QObject::connect(map, &TradeoffRun::finished, &window, grabAndQuit, Qt::QueuedConnection);
        if (!options.quitAfterSeconds) {
            // A map that never started (a file that did not open, a bad range) is pictured
            // with its error after the default wait; a dialog still open does not hold it.
            QTimer::singleShot(3000, &window, [map, grabAndQuit] {
                if (map->state() == TradeoffRun::State::Empty) grabAndQuit();
            });
            return;
        }
    }
    const double seconds = options.quitAfterSeconds.value_or(3.0);
    QTimer::singleShot(static_cast<int>(seconds * 1000), &window, grabAndQuit);
}

}  // namespace ratelab::gui
