#include "gui/policy/policy_text_fields.h"

#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace ratelab::gui {

std::vector<std::string> splitList(const QString& text) {
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    std::vector<std::string> out;
    for (const QString& item : text.split(separators, Qt::SkipEmptyParts))
        out.push_back(item.toStdString());
    return out;
}

QString joinList(const std::vector<std::string>& items) {
    QStringList list;
    for (const std::string& s : items)
        list << QString::fromStdString(s);
    return list.join(", ");
}

std::optional<std::vector<Cidr>> parseCidrList(const QString& text, QString& error) {
    std::vector<Cidr> out;
    for (const std::string& item : splitList(text)) {
        std::optional<Cidr> cidr = Cidr::parse(item, true);
        if (!cidr) {
            error = QObject::tr(
                        "\"%1\" is not a CIDR block such as 10.0.0.0/8 (host bits must be "
                        "zero)")
                        .arg(QString::fromStdString(item));
            return std::nullopt;
        }
        out.push_back(*cidr);
    }
    return out;
}

QString cidrListText(const std::vector<Cidr>& cidrs) {
    QStringList list;
    for (const Cidr& c : cidrs)
        list << QString::fromStdString(c.toString());
    return list.join(", ");
}

std::optional<std::vector<AddressBudget>> parseAddressBudgets(const QString& text, int bits,
                                                               QString& error) {
    std::vector<AddressBudget> out;
    for (const QString& item : text.split(',', Qt::SkipEmptyParts)) {
        const QStringList parts = item.simplified().split(' ', Qt::SkipEmptyParts);
        bool prefixOk = false;
        bool capOk = false;
        const int prefix = parts.value(0).remove('/').toInt(&prefixOk);
        const qlonglong cap = parts.value(1).toLongLong(&capOk);
        if (parts.size() != 2 || !prefixOk || !capOk || prefix < 1 || prefix > bits || cap < 1 ||
            cap > 4'294'967'295LL) {
            error = QObject::tr("\"%1\" is not a level such as /48 1024 (a prefix of 1 to %2 "
                                "bits, then the cap)")
                        .arg(item.trimmed())
                        .arg(bits);
            return std::nullopt;
        }
        out.push_back({prefix, static_cast<std::uint32_t>(cap)});
    }
    return out;
}

QString addressBudgetsText(const std::vector<AddressBudget>& levels) {
    QStringList list;
    for (const AddressBudget& l : levels)
        list << QStringLiteral("/%1 %2").arg(l.prefix).arg(l.cap);
    return list.join(", ");
}

std::optional<std::vector<KeyPart>> parseKeyParts(const QString& text, QString& error) {
    std::vector<KeyPart> out;
    for (const std::string& item : splitList(text)) {
        KeyPart part;
        const auto colon = item.find(':');
        const std::string kind = item.substr(0, colon);
        const std::string name = colon == std::string::npos ? "" : item.substr(colon + 1);
        if (kind == "route" && colon == std::string::npos) {
            part.kind = KeyPart::Kind::Route;
        } else if (kind == "method" && colon == std::string::npos) {
            part.kind = KeyPart::Kind::Method;
        } else if (kind == "peer" && colon == std::string::npos) {
            part.kind = KeyPart::Kind::Peer;
        } else if (kind == "principal" && colon == std::string::npos) {
            part.kind = KeyPart::Kind::Principal;
        } else if (kind == "header" && !name.empty()) {
            part.kind = KeyPart::Kind::Header;
            part.name = name;
        } else if (kind == "attribute" && !name.empty()) {
            part.kind = KeyPart::Kind::Attribute;
            part.name = name;
        } else {
            error = QObject::tr(
                        "\"%1\" is not a key part: use route, method, peer, principal, "
                        "header:NAME or attribute:NAME")
                        .arg(QString::fromStdString(item));
            return std::nullopt;
        }
        out.push_back(std::move(part));
    }
    return out;
}

QString keyPartsText(const std::vector<KeyPart>& parts) {
    QStringList list;
    for (const KeyPart& p : parts) {
        switch (p.kind) {
            case KeyPart::Kind::Route:
                list << "route";
                break;
            case KeyPart::Kind::Method:
                list << "method";
                break;
            case KeyPart::Kind::Peer:
                list << "peer";
                break;
            case KeyPart::Kind::Principal:
                list << "principal";
                break;
            case KeyPart::Kind::Header:
                list << "header:" + QString::fromStdString(p.name);
                break;
            case KeyPart::Kind::Attribute:
                list << "attribute:" + QString::fromStdString(p.name);
                break;
        }
    }
    return list.join(", ");
}

double LogScale::valueAt(int position) const {
    const double t = std::clamp(position, 0, kSteps) / static_cast<double>(kSteps);
    return min * std::pow(max / min, t);
}

int LogScale::positionOf(double value) const {
    if (!(value > min)) return 0;
    if (value >= max) return kSteps;
    return static_cast<int>(std::lround(std::log(value / min) / std::log(max / min) * kSteps));
}

}  // namespace ratelab::gui
