// The actor columns of the scenario editor: who the actor is, when and how fast it sends
// (each arrival kind's parameters), what it requests, who it claims to be, and what the
// service answers it.

#include "gui/scenario/scenario_cell_text.h"
#include "gui/scenario/scenario_fields.h"

// A column names the members it sets; the others are left empty (no tool tip, free text,
// always applies). GCC 12 warns of each omitted member, and crashes on default member
// initializers that would silence it in a class template.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace ratelab::gui {

namespace {

using sim::Actor;
using sim::Arrival;
using sim::ForwardedSpec;
using sim::PeerSpec;
using sim::ResponseModel;
namespace scenario_names = sim::scenario_names;

QString str(const std::string& s) {
    return QString::fromStdString(s);
}

bool setText(std::string& out, const QString& text) {
    out = text.trimmed().toStdString();
    return true;
}

bool steady(const Actor& a) {
    return a.arrival.kind == Arrival::Kind::Constant || a.arrival.kind == Arrival::Kind::Poisson;
}
bool bursts(const Actor& a) {
    return a.arrival.kind == Arrival::Kind::Burst;
}
bool ramps(const Actor& a) {
    return a.arrival.kind == Arrival::Kind::Ramp;
}
bool sessions(const Actor& a) {
    return a.arrival.kind == Arrival::Kind::Session;
}
bool resamples(const Actor& a) {
    return a.arrival.kind == Arrival::Kind::Empirical;
}
bool perInstance(const Actor& a) {
    return a.arrival.perInstance();
}

// Which of the peer's fields the file writes for its kind: an address, or a network.
bool peerHasAddress(const PeerSpec& p) {
    return p.kind == PeerSpec::Kind::Ipv4 || p.kind == PeerSpec::Kind::Nat ||
           p.kind == PeerSpec::Kind::Ipv6;
}
bool hasPeer(const Actor& a) {
    return a.identity.peer.kind != PeerSpec::Kind::None;
}
bool rotatesPrefixes(const Actor& a) {
    return a.identity.peer.kind == PeerSpec::Kind::Ipv6PrefixRotate;
}
bool proxied(const Actor& a) {
    const ForwardedSpec::Kind k = a.identity.forwarded.kind;
    return k == ForwardedSpec::Kind::ViaProxy || k == ForwardedSpec::Kind::SpoofViaProxy;
}
bool forwards(const Actor& a) {
    return a.identity.forwarded.kind != ForwardedSpec::Kind::None;
}
// The response is modelled by a success rate or by statuses, never both: each column applies
// while the other is unused.
bool bySuccessRate(const Actor& a) {
    return a.response.kind != ResponseModel::Kind::Statuses;
}
bool byStatuses(const Actor& a) {
    return a.response.kind != ResponseModel::Kind::SuccessRate;
}

}  // namespace

const std::vector<FieldColumn<Actor>>& actorColumns() {
    static const std::vector<FieldColumn<Actor>> columns = {
        {.header = QObject::tr("Name"),
         .tip = QObject::tr("Unique among the actors"),
         .paths = {"name"},
         .text = [](const Actor& a) { return str(a.name); },
         .set = [](Actor& a, const QString& t, QString&) { return setText(a.name, t); }},
        {.header = QObject::tr("Class"),
         .tip = QObject::tr("legit, attacker or any name: metrics group by it"),
         .paths = {"class"},
         .text = [](const Actor& a) { return str(a.className); },
         .set = [](Actor& a, const QString& t, QString&) { return setText(a.className, t); }},
        {.header = QObject::tr("Count"),
         .tip = QObject::tr("Instances: identical clients"),
         .paths = {"count"},
         .text = [](const Actor& a) { return integerCell(a.count); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readInteger(t, a.count, error); }},
        {.header = QObject::tr("Start s"),
         .tip = QObject::tr("No request before this"),
         .paths = {"start_s"},
         .text = [](const Actor& a) { return secondsCell(a.start); },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 if (t.trimmed().isEmpty()) {
                     a.start = 0;
                     return true;
                 }
                 return readSeconds(t, a.start, error);
             }},
        {.header = QObject::tr("Stop s"),
         .tip = QObject::tr("No request from this on; empty: the end"),
         .paths = {"stop_s"},
         .text = [](const Actor& a) { return a.stop ? secondsCell(*a.stop) : QString(); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readOptionalSeconds(t, a.stop, error); }},
        {.header = QObject::tr("Arrival"),
         .tip = QObject::tr("When the instances send"),
         .paths = {"arrival/kind"},
         .choices = spellingList(scenario_names::kArrivalKinds),
         .text =
             [](const Actor& a) {
                 return spellingCell(scenario_names::kArrivalKinds, a.arrival.kind);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 if (!readSpelling(scenario_names::kArrivalKinds, t, a.arrival.kind, error))
                     return false;
                 // A ramp that never moved starts where the steady rate was.
                 Arrival& r = a.arrival;
                 if (r.kind == Arrival::Kind::Ramp && r.fromPerSecond == 0 && r.toPerSecond == 0)
                     r.fromPerSecond = r.toPerSecond = r.ratePerSecond;
                 // Sessions or gaps never set start as the steady rate's requests, one by one.
                 const double gap = r.ratePerSecond > 0 ? 1 / r.ratePerSecond : 1;
                 if (r.kind == Arrival::Kind::Session && r.sessionSize.values.empty()) {
                     r.sessionSize.values = {1};
                     r.sessionSpan.values = {0};
                     r.idle = sim::Distribution{{gap}, {}};
                 }
                 if (r.kind == Arrival::Kind::Empirical && r.gaps.values.empty())
                     r.gaps.values = {gap};
                 return true;
             }},
        {.header = QObject::tr("Rate /s"),
         .tip = QObject::tr("Requests per second, per instance"),
         .paths = {"arrival/rate_per_s"},
         .applies = steady,
         .text = [](const Actor& a) { return numberCell(a.arrival.ratePerSecond); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readNumber(t, a.arrival.ratePerSecond, error); }},
        {.header = QObject::tr("Burst size"),
         .tip = QObject::tr("Requests per burst"),
         .paths = {"arrival/size"},
         .applies = bursts,
         .text = [](const Actor& a) { return integerCell(a.arrival.burstSize); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readInteger(t, a.arrival.burstSize, error); }},
        {.header = QObject::tr("Every s"),
         .tip = QObject::tr("Time from one burst to the next"),
         .paths = {"arrival/every_s"},
         .applies = bursts,
         .text = [](const Actor& a) { return secondsCell(a.arrival.burstEvery); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readSeconds(t, a.arrival.burstEvery, error); }},
        {.header = QObject::tr("Spacing ms"),
         .tip = QObject::tr("Time between a burst's requests"),
         .paths = {"arrival/spacing_ms"},
         .applies = bursts,
         .text = [](const Actor& a) { return millisCell(a.arrival.burstSpacing); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readMillis(t, a.arrival.burstSpacing, error); }},
        {.header = QObject::tr("Phase s"),
         .tip = QObject::tr("Every instance's first burst at start + phase; empty: a random phase"),
         .paths = {"arrival/phase_s"},
         .applies = bursts,
         .text =
             [](const Actor& a) {
                 return a.arrival.burstPhase ? secondsCell(*a.arrival.burstPhase) : QString();
             },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readOptionalSeconds(t, a.arrival.burstPhase, error); }},
        {.header = QObject::tr("From /s"),
         .tip = QObject::tr("A ramp's first rate, per instance"),
         .paths = {"arrival/from_per_s"},
         .applies = ramps,
         .text = [](const Actor& a) { return numberCell(a.arrival.fromPerSecond); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readNumber(t, a.arrival.fromPerSecond, error); }},
        {.header = QObject::tr("To /s"),
         .tip = QObject::tr("A ramp's last rate, per instance"),
         .paths = {"arrival/to_per_s"},
         .applies = ramps,
         .text = [](const Actor& a) { return numberCell(a.arrival.toPerSecond); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readNumber(t, a.arrival.toPerSecond, error); }},
        {.header = QObject::tr("Over s"),
         .tip = QObject::tr("How long the ramp takes; empty: until the actor stops"),
         .paths = {"arrival/over_s"},
         .applies = ramps,
         .text =
             [](const Actor& a) {
                 return a.arrival.rampOver != 0 ? secondsCell(a.arrival.rampOver) : QString();
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 if (t.trimmed().isEmpty()) {
                     a.arrival.rampOver = 0;
                     return true;
                 }
                 return readSeconds(t, a.arrival.rampOver, error);
             }},
        {.header = QObject::tr("Sessions"),
         .tip = QObject::tr("Sessions each instance sends, e.g. \"1; 2; 4\"; empty: until it "
                            "stops"),
         .paths = {"arrival/sessions"},
         .applies = sessions,
         .text =
             [](const Actor& a) {
                 return a.arrival.total ? distributionCell(*a.arrival.total) : QString();
             },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readOptionalDistribution(t, a.arrival.total, error); }},
        {.header = QObject::tr("Requests/session"),
         .tip = QObject::tr("Requests of a session, e.g. \"3; 8; 400=0.01\" (a value=probability "
                            "has its own probability)"),
         .paths = {"arrival/requests_per_session"},
         .applies = sessions,
         .text = [](const Actor& a) { return distributionCell(a.arrival.sessionSize); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readDistribution(t, a.arrival.sessionSize, error); }},
        {.header = QObject::tr("Session s"),
         .tip = QObject::tr("From a session's first request to its last: one value, or one per "
                            "requests/session value"),
         .paths = {"arrival/session_s"},
         .applies = sessions,
         .text = [](const Actor& a) { return distributionCell(a.arrival.sessionSpan); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readDistribution(t, a.arrival.sessionSpan, error); }},
        {.header = QObject::tr("Idle s"),
         .tip = QObject::tr("Between one session's last request and the next one's first; "
                            "empty: one session"),
         .paths = {"arrival/idle_s"},
         .applies = sessions,
         .text =
             [](const Actor& a) {
                 return a.arrival.idle ? distributionCell(*a.arrival.idle) : QString();
             },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readOptionalDistribution(t, a.arrival.idle, error); }},
        {.header = QObject::tr("Requests"),
         .tip = QObject::tr("Requests each instance sends; empty: until it stops"),
         .paths = {"arrival/requests"},
         .applies = resamples,
         .text =
             [](const Actor& a) {
                 return a.arrival.total ? distributionCell(*a.arrival.total) : QString();
             },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readOptionalDistribution(t, a.arrival.total, error); }},
        {.header = QObject::tr("Gap s"),
         .tip = QObject::tr("Between one request and the next, e.g. \"1.9; 2; 2.1\""),
         .paths = {"arrival/gap_s"},
         .applies = resamples,
         .text = [](const Actor& a) { return distributionCell(a.arrival.gaps); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readDistribution(t, a.arrival.gaps, error); }},
        {.header = QObject::tr("Resolution s"),
         .tip = QObject::tr("Each request's time rounded down to a multiple of this, as a log of "
                            "whole seconds shows them; empty: exact"),
         .paths = {"arrival/resolution_s"},
         .applies = perInstance,
         .text =
             [](const Actor& a) {
                 return a.arrival.resolution != 0 ? secondsCell(a.arrival.resolution) : QString();
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 if (t.trimmed().isEmpty()) {
                     a.arrival.resolution = 0;
                     return true;
                 }
                 return readSeconds(t, a.arrival.resolution, error);
             }},
        {.header = QObject::tr("Method"),
         .paths = {"request/method"},
         .text = [](const Actor& a) { return str(a.method); },
         .set = [](Actor& a, const QString& t, QString&) { return setText(a.method, t); }},
        {.header = QObject::tr("Path"),
         .paths = {"request/path"},
         .text = [](const Actor& a) { return str(a.path); },
         .set = [](Actor& a, const QString& t, QString&) { return setText(a.path, t); }},
        {.header = QObject::tr("Headers"),
         .tip = QObject::tr("name=value; ... sent with every request; {instance} becomes the "
                            "instance's number"),
         .paths = {"request/headers"},
         .text = [](const Actor& a) { return pairsCell(a.headers); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readPairs(t, a.headers, error); }},
        {.header = QObject::tr("Cost"),
         .tip = QObject::tr("Tokens per request; empty: each policy's own cost"),
         .paths = {"request/cost"},
         .text = [](const Actor& a) { return a.cost != 0 ? integerCell(a.cost) : QString(); },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 if (t.trimmed().isEmpty()) {
                     a.cost = 0;
                     return true;
                 }
                 return readInteger(t, a.cost, error);
             }},
        {.header = QObject::tr("Peer"),
         .tip = QObject::tr("The TCP peer the instances connect from"),
         .paths = {"identity/peer/kind"},
         .choices = spellingList(scenario_names::kPeerKinds),
         .text =
             [](const Actor& a) {
                 return spellingCell(scenario_names::kPeerKinds, a.identity.peer.kind);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 return readSpelling(scenario_names::kPeerKinds, t, a.identity.peer.kind, error);
             }},
        {.header = QObject::tr("Address / network"),
         .tip = QObject::tr(
             "ipv4, nat, ipv6: the address; ipv4_pool, ipv4_rotate, ipv6_prefix_rotate: the "
             "network; "
             "ipv6_rotate: the prefix"),
         .paths = {"identity/peer/address", "identity/peer/cidr", "identity/peer/prefix"},
         .applies = hasPeer,
         .text =
             [](const Actor& a) {
                 const PeerSpec& p = a.identity.peer;
                 return peerHasAddress(p) ? addressCell(p.address) : cidrCell(p.cidr);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 PeerSpec& p = a.identity.peer;
                 return peerHasAddress(p) ? readAddress(t, p.address, error)
                                          : readCidr(t, p.cidr, error);
             }},
        {.header = QObject::tr("Prefix len"),
         .tip = QObject::tr("ipv6_prefix_rotate: the length of each network"),
         .paths = {"identity/peer/prefix_len"},
         .applies = rotatesPrefixes,
         .text = [](const Actor& a) { return integerCell(a.identity.peer.prefixLength); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readInteger(t, a.identity.peer.prefixLength, error); }},
        {.header = QObject::tr("Authorization"),
         .tip = QObject::tr("A token per instance, or a new one per request"),
         .paths = {"identity/authorization"},
         .choices = spellingList(scenario_names::kAuthorizationModes),
         .text =
             [](const Actor& a) {
                 return spellingCell(scenario_names::kAuthorizationModes, a.identity.authorization);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 return readSpelling(scenario_names::kAuthorizationModes, t,
                                     a.identity.authorization, error);
             }},
        {.header = QObject::tr("Principal"),
         .tip = QObject::tr("A verified principal per instance"),
         .paths = {"identity/principal"},
         .choices = spellingList(scenario_names::kPrincipalModes),
         .text =
             [](const Actor& a) {
                 return spellingCell(scenario_names::kPrincipalModes, a.identity.principal);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 return readSpelling(scenario_names::kPrincipalModes, t, a.identity.principal,
                                     error);
             }},
        {.header = QObject::tr("Forwarded"),
         .tip = QObject::tr("What the client writes in a forwarded header"),
         .paths = {"identity/forwarded_for"},
         .choices = spellingList(scenario_names::kForwardedKinds),
         .text =
             [](const Actor& a) {
                 return spellingCell(scenario_names::kForwardedKinds, a.identity.forwarded.kind);
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 return readSpelling(scenario_names::kForwardedKinds, t, a.identity.forwarded.kind,
                                     error);
             }},
        {.header = QObject::tr("Proxy"),
         .tip = QObject::tr("The proxy the requests arrive from"),
         .paths = {"identity/proxy"},
         .applies = proxied,
         .text = [](const Actor& a) { return addressCell(a.identity.forwarded.proxy); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readAddress(t, a.identity.forwarded.proxy, error); }},
        {.header = QObject::tr("Forwarded header"),
         .tip = QObject::tr("x-forwarded-for, forwarded or x-real-ip"),
         .paths = {"identity/forwarded_header"},
         .applies = forwards,
         .text = [](const Actor& a) { return str(a.identity.forwarded.header); },
         .set = [](Actor& a, const QString& t,
                   QString&) { return setText(a.identity.forwarded.header, t); }},
        {.header = QObject::tr("Attributes"),
         .tip = QObject::tr("name=value; ... verified attributes, e.g. plan=premium; {instance} "
                            "becomes the instance's number"),
         .paths = {"identity/attributes"},
         .text = [](const Actor& a) { return pairsCell(a.identity.attributes); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readPairs(t, a.identity.attributes, error); }},
        {.header = QObject::tr("Success rate"),
         .tip = QObject::tr("The share of passed requests the service answers 200; empty: not "
                            "modelled"),
         .paths = {"response/success_rate"},
         .applies = bySuccessRate,
         .text =
             [](const Actor& a) {
                 return a.response.kind == ResponseModel::Kind::SuccessRate
                            ? numberCell(a.response.successRate)
                            : QString();
             },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 ResponseModel& r = a.response;
                 if (t.trimmed().isEmpty()) {
                     r.kind = ResponseModel::Kind::None;
                     return true;
                 }
                 if (!readNumber(t, r.successRate, error)) return false;
                 r.kind = ResponseModel::Kind::SuccessRate;
                 return true;
             }},
        {.header = QObject::tr("Failure status"),
         .tip = QObject::tr("The status of the other answers"),
         .paths = {"response/failure_status"},
         .applies =
             [](const Actor& a) { return a.response.kind == ResponseModel::Kind::SuccessRate; },
         .text = [](const Actor& a) { return integerCell(a.response.failureStatus); },
         .set = [](Actor& a, const QString& t,
                   QString& error) { return readInteger(t, a.response.failureStatus, error); }},
        {.header = QObject::tr("Statuses"),
         .tip = QObject::tr("status=probability; ... adding up to 1, e.g. 200=0.9; 401=0.1"),
         .paths = {"response/statuses"},
         .applies = byStatuses,
         .text = [](const Actor& a) { return statusesCell(a.response.statuses); },
         .set =
             [](Actor& a, const QString& t, QString& error) {
                 ResponseModel& r = a.response;
                 if (!readStatuses(t, r.statuses, error)) return false;
                 r.kind =
                     r.statuses.empty() ? ResponseModel::Kind::None : ResponseModel::Kind::Statuses;
                 return true;
             }},
    };
    return columns;
}

}  // namespace ratelab::gui
