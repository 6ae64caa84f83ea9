#pragma once

// Text in the scenario editor's cells. Numbers show in the user's locale (numberText()'s
// shortest spelling with the locale's decimal sign) and read back in it or in the C locale;
// times show in seconds; lists of names show as "name=value; name=value"; enumerations show
// as the scenario file spells them (sim/scenario/scenario_names.h). Each reader returns false, with
// `error` saying why, when the text is not of its type, and then leaves `out` alone; for the
// texts the loader reads itself (addresses, networks) with the loader's words.

#include <QObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/limit.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"

namespace ratelab::gui {

QString numberCell(double x);
bool readNumber(const QString& text, double& out, QString& error);

QString integerCell(std::int64_t n);
bool readInteger(const QString& text, std::int64_t& out, QString& error);
bool readInteger(const QString& text, int& out, QString& error);

/// Virtual time in seconds ("12.5").
QString secondsCell(Nanos n);
bool readSeconds(const QString& text, Nanos& out, QString& error);
/// Whole milliseconds.
QString millisCell(Nanos n);
bool readMillis(const QString& text, Nanos& out, QString& error);

/// Fields that may be unset: an empty text unsets them.
bool readOptionalNumber(const QString& text, std::optional<double>& out, QString& error);
bool readOptionalInteger(const QString& text, std::optional<std::int64_t>& out, QString& error);
bool readOptionalSeconds(const QString& text, std::optional<Nanos>& out, QString& error);

QString addressCell(const IpAddress& address);
bool readAddress(const QString& text, IpAddress& out, QString& error);
QString cidrCell(const Cidr& cidr);
/// A network with no host bits set past its prefix (the model cannot hold others).
bool readCidr(const QString& text, Cidr& out, QString& error);

/// Headers or attributes: "x-account=u{instance}; plan=free".
QString pairsCell(const std::vector<std::pair<std::string, std::string>>& pairs);
bool readPairs(const QString& text, std::vector<std::pair<std::string, std::string>>& out,
               QString& error);
/// A response's statuses: "200=0.9; 401=0.1".
QString statusesCell(const std::vector<std::pair<int, double>>& statuses);
bool readStatuses(const QString& text, std::vector<std::pair<int, double>>& out, QString& error);

/// A session or empirical arrival's distribution: "3; 8; 400=0.01", each value equally likely
/// but one written VALUE=PROBABILITY, which has its own (the file's [value, probability]). The
/// loader checks the values' ranges and that the probabilities leave some to the others.
QString distributionCell(const sim::Distribution& d);
bool readDistribution(const QString& text, sim::Distribution& out, QString& error);
/// Unset when the text is empty.
bool readOptionalDistribution(const QString& text, std::optional<sim::Distribution>& out,
                              QString& error);

template <class E>
QStringList spellingList(sim::scenario_names::Spellings<E> spellings) {
    QStringList out;
    for (const auto& [name, value] : spellings)
        out << QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    return out;
}

template <class E>
QString spellingCell(sim::scenario_names::Spellings<E> spellings, E value) {
    const std::string_view name = sim::scenario_names::nameOf(spellings, value);
    return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

template <class E>
bool readSpelling(sim::scenario_names::Spellings<E> spellings, const QString& text, E& out, QString& error) {
    const std::string wanted = text.trimmed().toStdString();
    for (const auto& [name, value] : spellings) {
        if (name == wanted) {
            out = value;
            return true;
        }
    }
    error = QObject::tr("\"%1\" is not one of %2")
                .arg(text.trimmed(), spellingList(spellings).join(", "));
    return false;
}

}  // namespace ratelab::gui
