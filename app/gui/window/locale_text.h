#pragma once

// Numbers as the workbench shows them to people: in the user's locale (QLocale(), which
// follows QLocale::setDefault), with its decimal separator and digit grouping, so a German
// user reads "1.234,5". Files never use these: ratelab/number_text.h writes every number that
// goes into a policy, a scenario, an export or a CSV with a dot.

#include <QString>
#include <QVariant>

#include <cstdint>

namespace ratelab::gui {

/// A count: 1234 -> "1,234" (English), "1.234" (German).
QString localeCount(std::int64_t n);
/// A difference: the count with the locale's plus sign when positive ("+1,234", "-5", "0").
QString localeSignedCount(std::int64_t n);
/// `x` with `decimals` digits after the separator: 12.5, 1 -> "12.5" / "12,5".
QString localeFixed(double x, int decimals);
/// `x` with at most `significant` significant digits and no trailing zeros: 0.25 -> "0,25".
QString localeNumber(double x, int significant = 6);
/// The shortest text that reads back as `x` (like numberText(), in the locale): 2.5 -> "2,5".
QString localeShortest(double x);
/// A number the user typed in a table cell: the locale's spelling, or else the dot's (what
/// files and pasted values use). 0 with `ok` false when it is neither.
double parseLocaleNumber(const QString& text, bool* ok = nullptr);

/// A table model's cell for a count: the number itself for Qt::UserRole (sorting, tests), the
/// locale's text (signed when `signedText`) for display.
QVariant countCell(std::int64_t n, bool raw, bool signedText = false);

}  // namespace ratelab::gui
