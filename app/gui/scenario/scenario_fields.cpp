// The scenario-wide, event and expectation columns of the scenario editor, and the rows its
// buttons add; the actor columns are in actor_fields.cpp.

#include "gui/scenario/scenario_fields.h"

#include <algorithm>

#include "gui/scenario/scenario_cell_text.h"
#include "sim/report/counters.h"

// A column names the members it sets; the others are left empty (no tool tip, free text,
// always applies). GCC 12 warns of each omitted member, and crashes on default member
// initializers that would silence it in a class template.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace ratelab::gui {

namespace {

using sim::ScenarioEvent;

QString str(const std::string& s) {
    return QString::fromStdString(s);
}

bool isStoreEvent(const ScenarioEvent& e) {
    return e.kind != ScenarioEvent::Kind::PolicyChange;
}
bool isOutage(const ScenarioEvent& e) {
    return e.kind == ScenarioEvent::Kind::StoreOutage;
}
bool isLatency(const ScenarioEvent& e) {
    return e.kind == ScenarioEvent::Kind::StoreLatency;
}
bool isPolicyChange(const ScenarioEvent& e) {
    return e.kind == ScenarioEvent::Kind::PolicyChange;
}

QString optionalInteger(const std::optional<std::int64_t>& n) {
    return n ? integerCell(*n) : QString();
}
QString optionalNumber(const std::optional<double>& x) {
    return x ? numberCell(*x) : QString();
}

// `base` when no actor has that name, else `base 2`, `base 3`, ...
std::string unusedActorName(const sim::Scenario& s, const std::string& base) {
    auto used = [&](const std::string& name) {
        return std::any_of(s.actors.begin(), s.actors.end(),
                           [&](const sim::Actor& a) { return a.name == name; });
    };
    std::string name = base;
    for (int n = 2; used(name); ++n)
        name = base + " " + std::to_string(n);
    return name;
}

}  // namespace

const std::vector<FieldColumn<sim::Scenario>>& runColumns() {
    using S = sim::Scenario;
    static const std::vector<FieldColumn<S>> columns = {
        {.header = QObject::tr("Name"),
         .tip = QObject::tr("The scenario's name, as reports name it"),
         .paths = {"name"},
         .text = [](const S& s) { return str(s.name); },
         .set =
             [](S& s, const QString& t, QString&) {
                 s.name = t.trimmed().toStdString();
                 return true;
             }},
        {.header = QObject::tr("Title"),
         .tip = QObject::tr("The line shown above the timeline"),
         .paths = {"title"},
         .text = [](const S& s) { return str(s.title); },
         .set =
             [](S& s, const QString& t, QString&) {
                 s.title = t.trimmed().toStdString();
                 return true;
             }},
        {.header = QObject::tr("Duration s"),
         .tip = QObject::tr("Virtual time the run covers"),
         .paths = {"duration_s"},
         .text = [](const S& s) { return secondsCell(s.duration); },
         .set = [](S& s, const QString& t,
                   QString& error) { return readSeconds(t, s.duration, error); }},
        {.header = QObject::tr("Sample ms"),
         .tip = QObject::tr("Virtual time per sample of the charts"),
         .paths = {"sample_ms"},
         .text = [](const S& s) { return millisCell(s.sampleInterval); },
         .set = [](S& s, const QString& t,
                   QString& error) { return readMillis(t, s.sampleInterval, error); }},
        {.header = QObject::tr("Seed"),
         .tip = QObject::tr("Seeds every random draw: the same seed, the same run"),
         .paths = {"seed"},
         .text = [](const S& s) { return QString::number(static_cast<qulonglong>(s.seed)); },
         .set =
             [](S& s, const QString& t, QString& error) {
                 bool ok = false;
                 const qulonglong seed = t.trimmed().toULongLong(&ok);
                 if (!ok) error = QObject::tr("\"%1\" is not a whole number of at least 0").arg(t);
                 if (ok) s.seed = seed;
                 return ok;
             }},
        {.header = QObject::tr("Replicas"),
         .tip = QObject::tr("Limiter processes the traffic is spread over"),
         .paths = {"replicas"},
         .text = [](const S& s) { return integerCell(s.replicas); },
         .set = [](S& s, const QString& t,
                   QString& error) { return readInteger(t, s.replicas, error); }},
    };
    return columns;
}

const std::vector<FieldColumn<ScenarioEvent>>& eventColumns() {
    using E = ScenarioEvent;
    namespace scenario_names = sim::scenario_names;
    static const std::vector<FieldColumn<E>> columns = {
        {.header = QObject::tr("Kind"),
         .paths = {"kind"},
         .choices = spellingList(scenario_names::kEventKinds),
         .text = [](const E& e) { return spellingCell(scenario_names::kEventKinds, e.kind); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readSpelling(scenario_names::kEventKinds, t, e.kind, error); }},
        {.header = QObject::tr("From s"),
         .tip = QObject::tr("A store event starts here; a policy change applies here"),
         .paths = {"from_s", "at_s"},
         .text = [](const E& e) { return secondsCell(e.from); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readSeconds(t, e.from, error); }},
        {.header = QObject::tr("To s"),
         .tip = QObject::tr("A store event is active until here"),
         .paths = {"to_s"},
         .applies = isStoreEvent,
         .text = [](const E& e) { return secondsCell(e.to); },
         .set = [](E& e, const QString& t, QString& error) { return readSeconds(t, e.to, error); }},
        {.header = QObject::tr("Failure"),
         .tip = QObject::tr("How the store fails during an outage"),
         .paths = {"failure"},
         .choices = spellingList(scenario_names::kStoreFailures),
         .applies = isOutage,
         .text = [](const E& e) { return spellingCell(scenario_names::kStoreFailures, e.failure); },
         .set =
             [](E& e, const QString& t, QString& error) {
                 return readSpelling(scenario_names::kStoreFailures, t, e.failure, error);
             }},
        {.header = QObject::tr("Latency ms"),
         .tip = QObject::tr("Added to every store call"),
         .paths = {"latency_ms"},
         .applies = isLatency,
         .text = [](const E& e) { return millisCell(e.latency); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readMillis(t, e.latency, error); }},
        {.header = QObject::tr("Replica"),
         .tip = QObject::tr("With a store per replica: whose store; empty: every store"),
         .paths = {"replica"},
         .applies = isStoreEvent,
         .text = [](const E& e) { return e.replica < 0 ? QString() : integerCell(e.replica); },
         .set =
             [](E& e, const QString& t, QString& error) {
                 if (!t.trimmed().isEmpty()) return readInteger(t, e.replica, error);
                 e.replica = -1;
                 return true;
             }},
        {.header = QObject::tr("Policy"),
         .tip = QObject::tr("The policy a change applies to; empty: the first"),
         .paths = {"policy"},
         .applies = isPolicyChange,
         .text = [](const E& e) { return str(e.change.policy); },
         .set =
             [](E& e, const QString& t, QString&) {
                 e.change.policy = t.trimmed().toStdString();
                 return true;
             }},
        {.header = QObject::tr("Capacity"),
         .tip = QObject::tr("Empty: unchanged"),
         .paths = {"set/capacity"},
         .applies = isPolicyChange,
         .text = [](const E& e) { return optionalInteger(e.change.capacity); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readOptionalInteger(t, e.change.capacity, error); }},
        {.header = QObject::tr("Refill /s"),
         .tip = QObject::tr("Empty: unchanged"),
         .paths = {"set/refill_per_second"},
         .applies = isPolicyChange,
         .text = [](const E& e) { return optionalNumber(e.change.refillPerSecond); },
         .set =
             [](E& e, const QString& t, QString& error) {
                 return readOptionalNumber(t, e.change.refillPerSecond, error);
             }},
        {.header = QObject::tr("Window ms"),
         .tip = QObject::tr("Empty: unchanged"),
         .paths = {"set/window_ms"},
         .applies = isPolicyChange,
         .text = [](const E& e) { return optionalInteger(e.change.windowMs); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readOptionalInteger(t, e.change.windowMs, error); }},
        {.header = QObject::tr("Cost"),
         .tip = QObject::tr("Empty: unchanged"),
         .paths = {"set/cost"},
         .applies = isPolicyChange,
         .text = [](const E& e) { return optionalInteger(e.change.cost); },
         .set = [](E& e, const QString& t,
                   QString& error) { return readOptionalInteger(t, e.change.cost, error); }},
        {.header = QObject::tr("Mode"),
         .tip = QObject::tr("Empty: unchanged"),
         .paths = {"set/mode"},
         .choices = QStringList{QString()} + spellingList(scenario_names::kPolicyModes),
         .applies = isPolicyChange,
         .text =
             [](const E& e) {
                 return e.change.mode ? spellingCell(scenario_names::kPolicyModes, *e.change.mode)
                                      : QString();
             },
         .set =
             [](E& e, const QString& t, QString& error) {
                 if (t.trimmed().isEmpty()) {
                     e.change.mode.reset();
                     return true;
                 }
                 PolicyMode mode = PolicyMode::Enforce;
                 if (!readSpelling(scenario_names::kPolicyModes, t, mode, error)) return false;
                 e.change.mode = mode;
                 return true;
             }},
    };
    return columns;
}

const std::vector<FieldColumn<sim::Expectation>>& expectationColumns() {
    using X = sim::Expectation;
    static const std::vector<FieldColumn<X>> columns = {
        {.header = QObject::tr("Metric"),
         .tip = QObject::tr("e.g. attacker.allowed_per_s, legit.throttled_fraction"),
         .paths = {"metric"},
         .text = [](const X& x) { return str(x.metric); },
         .set =
             [](X& x, const QString& t, QString&) {
                 x.metric = t.trimmed().toStdString();
                 return true;
             }},
        {.header = QObject::tr("Min"),
         .tip = QObject::tr("Empty: no lower bound"),
         .paths = {"min"},
         .text = [](const X& x) { return optionalNumber(x.min); },
         .set = [](X& x, const QString& t,
                   QString& error) { return readOptionalNumber(t, x.min, error); }},
        {.header = QObject::tr("Max"),
         .tip = QObject::tr("Empty: no upper bound"),
         .paths = {"max"},
         .text = [](const X& x) { return optionalNumber(x.max); },
         .set = [](X& x, const QString& t,
                   QString& error) { return readOptionalNumber(t, x.max, error); }},
    };
    return columns;
}

sim::Actor newActor(const sim::Scenario& scenario) {
    sim::Actor a;
    a.name = unusedActorName(scenario, QObject::tr("actor").toStdString());
    return a;
}

sim::Actor duplicateActor(const sim::Scenario& scenario, std::size_t index) {
    sim::Actor a = scenario.actors.at(index);
    a.name = unusedActorName(scenario, a.name);
    return a;
}

sim::ScenarioEvent newEvent(const sim::Scenario& scenario) {
    ScenarioEvent e;
    e.kind = ScenarioEvent::Kind::StoreOutage;
    e.failure = sim::StoreFailure::Transport;
    e.from = scenario.duration / 2;
    e.to = e.from + std::max<Nanos>(scenario.duration / 10, 1);
    return e;
}

sim::Expectation newExpectation(const sim::Scenario& scenario) {
    sim::Expectation x;
    x.metric = sim::metricNames(scenario.classNames()).front();
    x.min = 0;
    return x;
}

}  // namespace ratelab::gui
