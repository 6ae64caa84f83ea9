#pragma once

// The policy fields the editor shows as text: lists of methods, CIDRs, principals and
// composite key parts. Parsing never loses what the user typed: a field that does not parse
// says why, and the editor keeps the text while the document keeps its last good value.

#include <QString>

#include <optional>
#include <string>
#include <vector>

#include "ratelab/ip_address.h"
#include "ratelab/policy.h"

namespace ratelab::gui {

/// "GET, POST" -> {"GET", "POST"}: split at commas and white space, empty items dropped.
std::vector<std::string> splitList(const QString& text);
QString joinList(const std::vector<std::string>& items);

/// "10.0.0.0/8, 2001:db8::/32". Nullopt with `error` naming the first bad item.
std::optional<std::vector<Cidr>> parseCidrList(const QString& text, QString& error);
QString cidrListText(const std::vector<Cidr>& cidrs);

/// "route, header:x-account, attribute:plan" (the policy file's spelling of composite parts).
std::optional<std::vector<KeyPart>> parseKeyParts(const QString& text, QString& error);
QString keyPartsText(const std::vector<KeyPart>& parts);

/// An address budget as "/48 1024, /32 65536" (prefix and cap per level, longest prefix first;
/// the slash is optional). `bits` is the family's length (128 or 32). Nullopt with `error`
/// naming the first bad item.
std::optional<std::vector<AddressBudget>> parseAddressBudgets(const QString& text, int bits,
                                                               QString& error);
QString addressBudgetsText(const std::vector<AddressBudget>& levels);

/// A logarithmic slider scale: positions 0..kSteps map onto [min, max].
struct LogScale {
    static constexpr int kSteps = 1000;
    double min = 1;
    double max = 10000;
    double valueAt(int position) const;
    int positionOf(double value) const;
};

/// The capacity slider: 1 to 10 000 tokens (or requests per window), whole numbers.
inline constexpr LogScale kCapacityScale{1, 10000};
/// The refill slider: 0.01 to 10 000 tokens per second.
inline constexpr LogScale kRefillScale{0.01, 10000};

}  // namespace ratelab::gui
