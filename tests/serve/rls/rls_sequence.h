#pragma once

// Call sequences of Envoy's rate limit service written as lines, for the decider's suites:
//
//   "1234: domain key=value ; k=v,k2=v2+0 => OVER | OK 10/minute rem 9 reset 60 | OVER ..."
//
// before the colon the time in Unix seconds (fractions allowed); then the domain ('' for an
// empty one), "*N" after it for the request's hits_addend; descriptors separated by ';', entries
// by ',', "+N" after the last entry for the descriptor's own hits_addend; after "=>" the
// overall code and each status: OK or OVER, then "L/unit[/name] rem R reset S" when a limit
// answered, "unlimited" for an unlimited rule, nothing when no rule applied. "=> ERROR message"
// expects the call to fail. A line "xN 1234: ..." is that call N times.

#include <QtTest>

#include <cstdio>
#include <string>
#include <vector>

#include "serve/rls/rls_decider.h"

namespace ratelab::rlstest {

using namespace ratelab::serve::rls;

struct Step {
    int repeat = 1;
    Nanos now = 0;
    RlsRequest request;
    QString expected;
};

inline QString unitText(RlsUnit unit) {
    switch (unit) {
        case RlsUnit::Second:
            return "second";
        case RlsUnit::Minute:
            return "minute";
        case RlsUnit::Hour:
            return "hour";
        case RlsUnit::Day:
            return "day";
        case RlsUnit::Week:
            return "week";
        case RlsUnit::Month:
            return "month";
        case RlsUnit::Year:
            return "year";
        case RlsUnit::Unknown:
            break;
    }
    return "unknown";
}

inline QString secondsText(Nanos t) {
    if (t % kNanosPerSecond == 0) return QString::number(t / kNanosPerSecond);
    return QString::number(static_cast<double>(t) / 1e9, 'g', 12);
}

/// A result as the sequence language writes it.
inline QString render(const RlsResult& r) {
    if (!r.ok()) return "ERROR " + QString::fromStdString(r.error.message);
    QStringList parts;
    parts << (r.response.overall == RlsCode::OverLimit ? "OVER" : "OK");
    for (const RlsStatus& s : r.response.statuses) {
        QString t = s.code == RlsCode::OverLimit ? "OVER" : "OK";
        if (s.currentLimit) {
            t += QString(" %1/%2")
                     .arg(s.currentLimit->requestsPerUnit)
                     .arg(unitText(s.currentLimit->unit));
            if (!s.currentLimit->name.empty())
                t += "/" + QString::fromStdString(s.currentLimit->name);
            t += QString(" rem %1 reset %2")
                     .arg(s.limitRemaining)
                     .arg(secondsText(s.durationUntilReset));
        } else if (s.limitRemaining == 4294967295u) {
            t += " unlimited";
        } else if (s.limitRemaining != 0) {
            t += QString(" rem %1").arg(s.limitRemaining);
        }
        parts << t;
    }
    return parts.join(" | ");
}

inline QString simplified(const QString& s) {
    return s.simplified();
}

/// Parses one line; aborts the test on a malformed line (a defect of the test, not the code).
inline Step parseStep(const QString& line) {
    Step step;
    QString rest = line.trimmed();
    if (rest.startsWith('x')) {
        const int space = rest.indexOf(' ');
        step.repeat = rest.mid(1, space - 1).toInt();
        rest = rest.mid(space + 1).trimmed();
    }
    const int colon = rest.indexOf(':');
    step.now = static_cast<Nanos>(rest.left(colon).toDouble() * 1e9 + 0.5);
    rest = rest.mid(colon + 1);
    const int arrow = rest.indexOf("=>");
    if (colon < 0 || arrow < 0) qFatal("malformed step: %s", qPrintable(line));
    step.expected = simplified(rest.mid(arrow + 2));
    QString call = rest.left(arrow).trimmed();
    const int space = call.indexOf(' ');
    QString domain = space < 0 ? call : call.left(space);
    call = space < 0 ? QString() : call.mid(space + 1).trimmed();
    if (const int star = domain.indexOf('*'); star >= 0) {
        step.request.hitsAddend = domain.mid(star + 1).toULongLong();
        domain = domain.left(star);
    }
    step.request.domain = domain == "''" ? std::string() : domain.toStdString();
    if (call.isEmpty()) return step;
    for (QString d : call.split(';')) {
        d = d.trimmed();
        RlsDescriptor descriptor;
        if (const int plus = d.lastIndexOf('+'); plus >= 0) {
            descriptor.hitsAddend = d.mid(plus + 1).toULongLong();
            d = d.left(plus);
        }
        if (!d.isEmpty()) {
            for (const QString& e : d.split(',')) {
                const int eq = e.indexOf('=');
                descriptor.entries.push_back(
                    {e.left(eq).toStdString(),
                     eq < 0 ? std::string() : e.mid(eq + 1).toStdString()});
            }
        }
        step.request.descriptors.push_back(std::move(descriptor));
    }
    return step;
}

/// Runs `lines` on `decider`, each call alone or, with `batched`, each step's repeats as one
/// batch. Returns the first mismatch as "line N (call i): expected ... got ...", or "".
inline QString runSteps(const RlsDecider& decider, const QStringList& lines, bool batched = false) {
    for (int n = 0; n < lines.size(); ++n) {
        const Step step = parseStep(lines[n]);
        std::vector<RlsRequest> requests(static_cast<std::size_t>(step.repeat), step.request);
        std::vector<RlsResult> results(requests.size());
        if (batched) {
            decider.decideBatch(requests, step.now, results);
        } else {
            for (std::size_t i = 0; i < requests.size(); ++i)
                results[i] = decider.decide(requests[i], step.now);
        }
        for (std::size_t i = 0; i < results.size(); ++i) {
            const QString got = simplified(render(results[i]));
            if (got != step.expected) {
                return QString("step %1 (%2, call %3 of %4):\n  expected %5\n  got      %6")
                    .arg(n + 1)
                    .arg(lines[n])
                    .arg(i + 1)
                    .arg(results.size())
                    .arg(step.expected, got);
            }
        }
    }
    return {};
}

}  // namespace ratelab::rlstest
