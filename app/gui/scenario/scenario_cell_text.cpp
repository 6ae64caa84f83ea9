#include "gui/scenario/scenario_cell_text.h"

#include <QLocale>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "ratelab/number_text.h"

namespace ratelab::gui {

namespace {

// Beyond a billion seconds (or a million million milliseconds) a time would overflow the
// nanosecond count; the loader refuses far smaller ones anyway, so such a text is held at the
// bound and refused there, with the loader's message.
constexpr double kMaxSeconds = 1e9;
constexpr std::int64_t kMaxMillis = 1'000'000'000'000;

QLocale cellLocale() {
    QLocale locale;
    locale.setNumberOptions(QLocale::OmitGroupSeparator);
    return locale;
}

QStringList items(const QString& text) {
    QStringList out;
    for (const QString& item : text.split(';', Qt::SkipEmptyParts)) {
        if (!item.trimmed().isEmpty()) out << item.trimmed();
    }
    return out;
}

}  // namespace

QString numberCell(double x) {
    QString text = QString::fromStdString(numberText(x));
    return text.replace('.', cellLocale().decimalPoint());
}

bool readNumber(const QString& text, double& out, QString& error) {
    const QString t = text.trimmed();
    bool ok = false;
    double x = cellLocale().toDouble(t, &ok);
    if (!ok) x = QLocale::c().toDouble(t, &ok);
    if (!ok) {
        error = QObject::tr("\"%1\" is not a number").arg(t);
        return false;
    }
    out = x;
    return true;
}

QString integerCell(std::int64_t n) {
    return cellLocale().toString(static_cast<qlonglong>(n));
}

bool readInteger(const QString& text, std::int64_t& out, QString& error) {
    const QString t = text.trimmed();
    bool ok = false;
    qlonglong n = cellLocale().toLongLong(t, &ok);
    if (!ok) n = QLocale::c().toLongLong(t, &ok);
    if (!ok) {
        error = QObject::tr("\"%1\" is not a whole number").arg(t);
        return false;
    }
    out = n;
    return true;
}

bool readInteger(const QString& text, int& out, QString& error) {
    std::int64_t n = 0;
    if (!readInteger(text, n, error)) return false;
    if (n < INT32_MIN || n > INT32_MAX) {
        error = QObject::tr("%1 is too large").arg(text.trimmed());
        return false;
    }
    out = static_cast<int>(n);
    return true;
}

QString secondsCell(Nanos n) {
    return numberCell(static_cast<double>(n) / 1e9);
}

bool readSeconds(const QString& text, Nanos& out, QString& error) {
    double s = 0;
    if (!readNumber(text, s, error)) return false;
    if (std::isnan(s)) {
        error = QObject::tr("\"%1\" is not a number").arg(text.trimmed());
        return false;
    }
    s = std::clamp(s, -kMaxSeconds, kMaxSeconds);
    out = static_cast<Nanos>(std::llround(s * 1e9));
    return true;
}

QString millisCell(Nanos n) {
    return integerCell(n / kNanosPerMilli);
}

bool readMillis(const QString& text, Nanos& out, QString& error) {
    std::int64_t ms = 0;
    if (!readInteger(text, ms, error)) return false;
    out = std::clamp(ms, -kMaxMillis, kMaxMillis) * kNanosPerMilli;
    return true;
}

bool readOptionalNumber(const QString& text, std::optional<double>& out, QString& error) {
    double x = 0;
    if (text.trimmed().isEmpty()) {
        out.reset();
    } else if (readNumber(text, x, error)) {
        out = x;
    } else {
        return false;
    }
    return true;
}

bool readOptionalInteger(const QString& text, std::optional<std::int64_t>& out, QString& error) {
    std::int64_t n = 0;
    if (text.trimmed().isEmpty()) {
        out.reset();
    } else if (readInteger(text, n, error)) {
        out = n;
    } else {
        return false;
    }
    return true;
}

bool readOptionalSeconds(const QString& text, std::optional<Nanos>& out, QString& error) {
    Nanos n = 0;
    if (text.trimmed().isEmpty()) {
        out.reset();
    } else if (readSeconds(text, n, error)) {
        out = n;
    } else {
        return false;
    }
    return true;
}

QString addressCell(const IpAddress& address) {
    return QString::fromStdString(address.toString());
}

bool readAddress(const QString& text, IpAddress& out, QString& error) {
    const std::optional<IpAddress> address = IpAddress::parse(text.trimmed().toStdString());
    if (!address) {
        error = QObject::tr("\"%1\" is not an IP address").arg(text.trimmed());
        return false;
    }
    out = *address;
    return true;
}

QString cidrCell(const Cidr& cidr) {
    return QString::fromStdString(cidr.toString());
}

bool readCidr(const QString& text, Cidr& out, QString& error) {
    const std::optional<Cidr> cidr = Cidr::parse(text.trimmed().toStdString(), /*strict=*/true);
    if (!cidr) {
        error = QObject::tr("\"%1\" is not a network in CIDR notation with no host bits set")
                    .arg(text.trimmed());
        return false;
    }
    out = *cidr;
    return true;
}

QString pairsCell(const std::vector<std::pair<std::string, std::string>>& pairs) {
    QStringList out;
    for (const auto& [name, value] : pairs)
        out << QString::fromStdString(name) + '=' + QString::fromStdString(value);
    return out.join("; ");
}

bool readPairs(const QString& text, std::vector<std::pair<std::string, std::string>>& out,
               QString& error) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const QString& item : items(text)) {
        const qsizetype eq = item.indexOf('=');
        if (eq < 0) {
            error = QObject::tr("\"%1\" is not NAME=VALUE").arg(item);
            return false;
        }
        pairs.emplace_back(item.left(eq).trimmed().toStdString(),
                           item.mid(eq + 1).trimmed().toStdString());
    }
    out = std::move(pairs);
    return true;
}

QString statusesCell(const std::vector<std::pair<int, double>>& statuses) {
    QStringList out;
    for (const auto& [status, probability] : statuses)
        out << QString::number(status) + '=' + numberCell(probability);
    return out.join("; ");
}

bool readStatuses(const QString& text, std::vector<std::pair<int, double>>& out, QString& error) {
    std::vector<std::pair<int, double>> statuses;
    for (const QString& item : items(text)) {
        const qsizetype eq = item.indexOf('=');
        int status = 0;
        double probability = 0;
        QString ignored;
        if (eq < 0 || !readInteger(item.left(eq), status, ignored) ||
            !readNumber(item.mid(eq + 1), probability, ignored)) {
            error = QObject::tr("\"%1\" is not STATUS=PROBABILITY, e.g. 401=0.25").arg(item);
            return false;
        }
        statuses.emplace_back(status, probability);
    }
    out = std::move(statuses);
    return true;
}

QString distributionCell(const sim::Distribution& d) {
    QStringList out;
    for (std::size_t i = 0; i < d.values.size(); ++i) {
        const bool own = !d.probabilities.empty() && d.probabilities[i] > 0;
        out << numberCell(d.values[i]) + (own ? '=' + numberCell(d.probabilities[i]) : QString());
    }
    return out.join("; ");
}

bool readDistribution(const QString& text, sim::Distribution& out, QString& error) {
    sim::Distribution d;
    bool weighted = false;
    for (const QString& item : items(text)) {
        const qsizetype eq = item.indexOf('=');
        double value = 0;
        double probability = 0;
        QString ignored;
        if (!readNumber(eq < 0 ? item : item.left(eq), value, ignored) ||
            (eq >= 0 && !readNumber(item.mid(eq + 1), probability, ignored))) {
            error = QObject::tr("\"%1\" is not a number or VALUE=PROBABILITY, e.g. 400=0.01")
                        .arg(item);
            return false;
        }
        d.values.push_back(value);
        d.probabilities.push_back(probability);
        weighted = weighted || eq >= 0;
    }
    if (d.values.empty()) {
        error = QObject::tr("a number, or numbers separated by \";\"");
        return false;
    }
    if (!weighted) d.probabilities.clear();
    out = std::move(d);
    return true;
}

bool readOptionalDistribution(const QString& text, std::optional<sim::Distribution>& out,
                              QString& error) {
    if (text.trimmed().isEmpty()) {
        out.reset();
        return true;
    }
    sim::Distribution d;
    if (!readDistribution(text, d, error)) return false;
    out = std::move(d);
    return true;
}

}  // namespace ratelab::gui
