#pragma once

// Calendar-aligned fixed windows (WindowAlign::Calendar): where the window holding an instant
// ends. Windows of `window` ns are the multiples of it on the Unix epoch, the same for every
// key (Envoy's rate limit service: a day starts at 00:00 UTC, a week on a Thursday, a "month" is
// 30 days from the epoch); months and years are the UTC calendar's (Kong). The Redis scripts
// compute the same ends in whole milliseconds (lua/calendar.lua).

#include <chrono>
#include <cstdint>
#include <limits>

#include "ratelab/limit.h"

namespace ratelab::algorithms {

inline constexpr Nanos kNanosPerDay = 86'400 * kNanosPerSecond;

/// floor(a / b). REQUIRES: b > 0.
constexpr std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
    const std::int64_t q = a / b;
    return (a % b < 0) ? q - 1 : q;
}

/// The end of the calendar window that holds Unix time `t` (ns): the next multiple of
/// limit.window after t, or the first instant of the next UTC month or year; the largest time
/// when that is beyond int64. REQUIRES: limit.window >= 1.
inline Nanos calendarWindowEnd(Nanos t, const Limit& limit) {
    constexpr Nanos kMax = std::numeric_limits<Nanos>::max();
    Nanos end = 0;
    if (limit.calendarUnit == CalendarUnit::None) {
        if (__builtin_mul_overflow(floorDiv(t, limit.window) + 1, limit.window, &end)) return kMax;
        return end;
    }
    using namespace std::chrono;
    const year_month_day date{sys_days{days{floorDiv(t, kNanosPerDay)}}};
    const year_month_day next = limit.calendarUnit == CalendarUnit::Month
                                    ? year_month_day{date.year() / date.month() / 1} + months{1}
                                    : year_month_day{(date.year() + years{1}) / January / 1};
    if (__builtin_mul_overflow(sys_days{next}.time_since_epoch().count(), kNanosPerDay, &end))
        return kMax;
    return end;
}

/// The end of the window holding the caller's `now` (its Unix time is now +
/// limit.unixTimeAtZero), in the caller's time. REQUIRES: limit.align == Calendar.
inline Nanos alignedWindowEnd(Nanos now, const Limit& limit) {
    const Nanos offset = limit.unixTimeAtZero;
    Nanos t = 0;
    if (__builtin_add_overflow(now, offset, &t)) return std::numeric_limits<Nanos>::max();
    const Nanos end = calendarWindowEnd(t, limit);
    Nanos caller = 0;
    if (__builtin_sub_overflow(end, offset, &caller)) return std::numeric_limits<Nanos>::max();
    return caller;
}

/// The length a window of `limit` is advertised with (RateLimit-Policy's w): a month as 30
/// days and a year as 365 (as Envoy and Kong advertise them), else its window.
constexpr Nanos nominalWindow(const Limit& limit) {
    if (limit.align == WindowAlign::Calendar && limit.calendarUnit == CalendarUnit::Month)
        return 30 * kNanosPerDay;
    if (limit.align == WindowAlign::Calendar && limit.calendarUnit == CalendarUnit::Year)
        return 365 * kNanosPerDay;
    return limit.window;
}

/// The longest one window of `limit` lasts: 31 days for months, 366 for years, else its window.
constexpr Nanos longestWindow(const Limit& limit) {
    if (limit.align == WindowAlign::Calendar && limit.calendarUnit == CalendarUnit::Month)
        return 31 * kNanosPerDay;
    if (limit.align == WindowAlign::Calendar && limit.calendarUnit == CalendarUnit::Year)
        return 366 * kNanosPerDay;
    return limit.window;
}

}  // namespace ratelab::algorithms
