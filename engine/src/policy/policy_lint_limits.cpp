// Lint warnings on how limits count: windows on the calendar, HAProxy's counter forgetting keys.
// Each rule is stated where it is checked, and each message says what to do (policy_lint.cpp
// holds the others).

#include "algorithms/calendar.h"
#include "policy/policy_file_internal.h"
#include "policy/policy_names.h"
#include "ratelab/number_text.h"

namespace ratelab::policy {

namespace {

constexpr std::int64_t kDayMs = algorithms::kNanosPerDay / kNanosPerMilli;

// Calendar-aligned windows of window_ms count from the Unix epoch. Rules: 30 and 365 days are
// not calendar months and years (Envoy's MONTH and YEAR are, and users of them are often
// surprised); whole weeks start on Thursdays (1970-01-01 was one); a window that neither divides
// a day nor is a whole number of days starts at another time of day each day.
void lintCalendarWindow(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.algorithm != Algorithm::FixedWindow || p.align != WindowAlign::Calendar ||
        p.calendarUnit != CalendarUnit::None) {
        return;
    }
    const std::int64_t w = p.windowMs;
    const std::string where = at + "/window_ms";
    const std::string window = "window_ms " + std::to_string(w);
    if (w == 30 * kDayMs || w == 365 * kDayMs) {
        const bool month = w == 30 * kDayMs;
        context.warning(where, window + " on the calendar is " + (month ? "30" : "365") +
                                   "-day blocks counted from 1970-01-01, not calendar " +
                                   (month ? "months" : "years") + " (Envoy's " +
                                   (month ? "MONTH" : "YEAR") + "); for calendar " +
                                   (month ? "months" : "years") + " write \"calendar_unit\": \"" +
                                   (month ? "month" : "year") + "\" without window_ms");
    } else if (w % (7 * kDayMs) == 0) {
        context.warning(where, window + " on the calendar makes windows of " +
                                   std::to_string(w / kDayMs) +
                                   " days that start on a Thursday, 00:00 UTC (1970-01-01 was "
                                   "a Thursday), as Envoy's WEEK does; if weeks should start "
                                   "on Monday, no window_ms can say so");
    } else if (kDayMs % w != 0 && w % kDayMs != 0) {
        context.warning(where, window +
                                   " on the calendar neither divides a day nor is a whole "
                                   "number of days: its windows start at another time of "
                                   "day each day; pick a divisor of 86400000 (such as " +
                                   numberText(3'600'000) + " for hours) or whole days");
    }
}

// HAProxy's counter with an expire shorter than its period forgets a key before the key's period
// ends. Rule: 0 < expire_ms < window_ms; a client sending once every expire_ms is then never
// counted past one request, whatever the capacity.
void lintHaproxyExpire(const Policy& p, const std::string& at, CheckContext& context) {
    if (p.algorithm != Algorithm::HaproxyRate || p.expireMs <= 0 || p.expireMs >= p.windowMs)
        return;
    context.warning(at + "/expire_ms",
                    "expire_ms " + std::to_string(p.expireMs) + " is shorter than the period (" +
                        "window_ms " + std::to_string(p.windowMs) +
                        "): a key unused that long is forgotten before its period ends, so a "
                        "client sending one request every " +
                        std::to_string(p.expireMs) +
                        " ms is never counted past one; set expire_ms to at least " +
                        std::to_string(p.windowMs) + " (" + std::to_string(2 * p.windowMs) +
                        " or more forgets only keys the counter has already let go)");
}

}  // namespace

void checkLimitLints(const PolicySet& set, CheckContext& context) {
    for (std::size_t i = 0; i < set.policies.size(); ++i) {
        const Policy& p = set.policies[i];
        const std::string at = policyPointer(i);
        lintCalendarWindow(p, at, context);
        lintHaproxyExpire(p, at, context);
    }
}

}  // namespace ratelab::policy
