#include "sim/log/format/log_time.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace ratelab::sim {

namespace {

constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kSecondsPerDay = 86'400;
constexpr unsigned kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

bool isLeap(std::int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// Exactly `n` digits at t[at..at+n).
bool fixedDigits(std::string_view t, std::size_t at, std::size_t n, std::int64_t& out) {
    if (at + n > t.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (!isDigit(t[i])) return false;
        out = out * 10 + (t[i] - '0');
    }
    return true;
}

bool fail(std::string_view t, const char* what, std::string& error) {
    error = "time \"" + std::string(t.substr(0, 60)) + "\" " + what;
    return false;
}

// A calendar time plus a zone offset in seconds, checked, to Unix microseconds.
bool civilToEpoch(std::string_view t, std::int64_t year, std::int64_t month, std::int64_t day,
                  std::int64_t hour, std::int64_t minute, std::int64_t second, std::int64_t micros,
                  std::int64_t offsetSeconds, std::int64_t& out, std::string& error) {
    if (month < 1 || month > 12) return fail(t, "is out of range", error);
    const unsigned monthDays = kMonthDays[month - 1] + (month == 2 && isLeap(year) ? 1 : 0);
    if (day < 1 || day > monthDays || hour > 23 || minute > 59 || second > 60) {
        return fail(t, "is out of range", error);
    }
    const std::int64_t seconds =
        daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) *
            kSecondsPerDay +
        (hour * 60 + minute) * 60 + second - offsetSeconds;
    out = seconds * kMicrosPerSecond + micros;
    if (out < 0 || out > kMaxEpochMicros) {
        return fail(t, "is outside 1970-01-01 to 9999-12-31", error);
    }
    return true;
}

bool parseClf(std::string_view t, std::int64_t& out, std::string& error) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    // dd/Mon/yyyy:HH:MM:SS +zzzz is 26 characters.
    if (t.size() != 26 || t[2] != '/' || t[6] != '/' || t[11] != ':' || t[14] != ':' ||
        t[17] != ':' || t[20] != ' ' || (t[21] != '+' && t[21] != '-')) {
        return fail(t, "is not dd/Mon/yyyy:HH:MM:SS +zzzz", error);
    }
    std::int64_t day, year, hour, minute, second, zoneH, zoneM;
    if (!fixedDigits(t, 0, 2, day) || !fixedDigits(t, 7, 4, year) || !fixedDigits(t, 12, 2, hour) ||
        !fixedDigits(t, 15, 2, minute) || !fixedDigits(t, 18, 2, second) ||
        !fixedDigits(t, 22, 2, zoneH) || !fixedDigits(t, 24, 2, zoneM)) {
        return fail(t, "has a non-numeric field", error);
    }
    std::int64_t month = 0;
    for (unsigned i = 0; i < 12; ++i) {
        if (t.substr(3, 3) == kMonths[i]) month = i + 1;
    }
    if (month == 0) return fail(t, "names no month", error);
    if (zoneH > 14 || zoneM > 59) return fail(t, "is out of range", error);
    const std::int64_t zone = (zoneH * 60 + zoneM) * 60 * (t[21] == '-' ? -1 : 1);
    return civilToEpoch(t, year, month, day, hour, minute, second, 0, zone, out, error);
}

// ".123456789" at t[pos]: microseconds (digits past the sixth dropped); pos moves past it.
bool fraction(std::string_view t, std::size_t& pos, std::int64_t& micros) {
    micros = 0;
    if (pos >= t.size() || (t[pos] != '.' && t[pos] != ',')) return true;
    ++pos;
    const std::size_t start = pos;
    while (pos < t.size() && isDigit(t[pos])) {
        if (pos - start < 6) micros = micros * 10 + (t[pos] - '0');
        ++pos;
    }
    if (pos == start) return false;
    for (std::size_t n = pos - start; n < 6; ++n)
        micros *= 10;
    return true;
}

// YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|+HHMM|+HH), 'T' or a space between date and time.
bool parseIso(std::string_view t, std::int64_t& out, std::string& error) {
    std::int64_t year, month, day, hour, minute, second = 0, micros = 0;
    if (!fixedDigits(t, 0, 4, year) || t.size() < 16 || t[4] != '-' ||
        !fixedDigits(t, 5, 2, month) || t[7] != '-' || !fixedDigits(t, 8, 2, day) ||
        (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !fixedDigits(t, 11, 2, hour) ||
        t[13] != ':' || !fixedDigits(t, 14, 2, minute)) {
        return fail(t, "is not ISO-8601 (YYYY-MM-DDTHH:MM:SS with an offset or Z)", error);
    }
    std::size_t pos = 16;
    if (pos < t.size() && t[pos] == ':') {
        if (!fixedDigits(t, pos + 1, 2, second)) return fail(t, "has no seconds", error);
        pos += 3;
        if (!fraction(t, pos, micros)) return fail(t, "has an empty fraction", error);
    }
    std::int64_t offset = 0;
    if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) {
        ++pos;
    } else if (pos < t.size() && (t[pos] == '+' || t[pos] == '-')) {
        const bool negative = t[pos] == '-';
        std::int64_t oh, om = 0;
        if (!fixedDigits(t, pos + 1, 2, oh)) return fail(t, "has a malformed offset", error);
        pos += 3;
        if (pos < t.size() && t[pos] == ':') ++pos;
        if (pos < t.size()) {
            if (!fixedDigits(t, pos, 2, om)) return fail(t, "has a malformed offset", error);
            pos += 2;
        }
        if (oh > 14 || om > 59) return fail(t, "has an offset out of range", error);
        offset = (oh * 60 + om) * 60 * (negative ? -1 : 1);
    } else {
        return fail(t, "has no UTC offset or Z (a local time is ambiguous)", error);
    }
    if (pos != t.size()) return fail(t, "has trailing characters", error);
    return civilToEpoch(t, year, month, day, hour, minute, second, micros, offset, out, error);
}

// Digits with an optional fraction, times `unitMicros` (1,000,000 for seconds, 1,000 for ms).
// An exponent ("1.6e9", as some JSON writers print numbers) goes through a double.
bool parseEpoch(std::string_view t, std::int64_t unitMicros, std::int64_t& out,
                std::string& error) {
    if (t.find_first_of("eE") != std::string_view::npos) {
        double v = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || end != t.data() + t.size() || !(v >= 0) ||
            v * static_cast<double>(unitMicros) > static_cast<double>(kMaxEpochMicros)) {
            return fail(t, "is not an epoch time from 1970 to 9999", error);
        }
        out = static_cast<std::int64_t>(std::floor(v * static_cast<double>(unitMicros)));
        return true;
    }
    std::size_t pos = 0;
    std::int64_t whole = 0;
    while (pos < t.size() && isDigit(t[pos])) {
        if (whole > kMaxEpochMicros / 10) return fail(t, "is too large", error);
        whole = whole * 10 + (t[pos] - '0');
        ++pos;
    }
    if (pos == 0) return fail(t, "is not a number", error);
    // The fraction in units of unitMicros / 10^k.
    std::int64_t part = 0;
    if (pos < t.size() && t[pos] == '.') {
        ++pos;
        std::int64_t scale = unitMicros;
        const std::size_t start = pos;
        while (pos < t.size() && isDigit(t[pos])) {
            scale /= 10;
            part += (t[pos] - '0') * scale;
            ++pos;
        }
        if (pos == start) return fail(t, "has an empty fraction", error);
    }
    if (pos != t.size()) return fail(t, "is not a number", error);
    if (whole > kMaxEpochMicros / unitMicros) {
        return fail(t, "is after 9999-12-31", error);
    }
    out = whole * unitMicros + part;
    if (out > kMaxEpochMicros) return fail(t, "is after 9999-12-31", error);
    return true;
}

}  // namespace

// Howard Hinnant's days_from_civil.
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool parseLogTime(std::string_view text, TimeSyntax syntax, std::int64_t& epochMicros,
                  std::string& error) {
    if (syntax == TimeSyntax::Any) {
        if (text.find('/') != std::string_view::npos) {
            syntax = TimeSyntax::Clf;
        } else if (text.size() > 4 && text[4] == '-') {
            syntax = TimeSyntax::Iso8601;
        } else {
            bool millis = false;
            if (text.find_first_of("eE") != std::string_view::npos) {
                double value = 0;
                std::from_chars(text.data(), text.data() + text.size(), value);
                millis = value >= 1e11;
            } else {
                std::size_t start = text.find_first_not_of('0');
                if (start == std::string_view::npos) start = text.size();
                std::size_t end = text.find_first_not_of("0123456789", start);
                if (end == std::string_view::npos) end = text.size();
                millis = end - start >= 12;  // 10^11 and above
            }
            syntax = millis ? TimeSyntax::EpochMillis : TimeSyntax::EpochSeconds;
        }
    }
    switch (syntax) {
        case TimeSyntax::Clf:
            return parseClf(text, epochMicros, error);
        case TimeSyntax::Iso8601:
            return parseIso(text, epochMicros, error);
        case TimeSyntax::EpochSeconds:
            return parseEpoch(text, kMicrosPerSecond, epochMicros, error);
        case TimeSyntax::EpochMillis:
            return parseEpoch(text, 1000, epochMicros, error);
        case TimeSyntax::Any:
            break;
    }
    return fail(text, "has no known syntax", error);
}

}  // namespace ratelab::sim
