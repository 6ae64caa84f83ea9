#include "gui/window/locale_text.h"

#include <QLocale>

namespace ratelab::gui {

QString localeCount(std::int64_t n) {
    return QLocale().toString(static_cast<qlonglong>(n));
}

QString localeSignedCount(std::int64_t n) {
    const QString text = localeCount(n);
    return n > 0 ? QLocale().positiveSign() + text : text;
}

QString localeFixed(double x, int decimals) {
    return QLocale().toString(x, 'f', decimals);
}

QString localeNumber(double x, int significant) {
    return QLocale().toString(x, 'g', significant);
}

QString localeShortest(double x) {
    return QLocale().toString(x, 'g', QLocale::FloatingPointShortest);
}

double parseLocaleNumber(const QString& text, bool* ok) {
    bool good = false;
    const QString trimmed = text.trimmed();
    double x = QLocale().toDouble(trimmed, &good);
    if (!good) x = QLocale::c().toDouble(trimmed, &good);
    if (ok) *ok = good;
    return good ? x : 0;
}

QVariant countCell(std::int64_t n, bool raw, bool signedText) {
    if (raw) return QVariant(static_cast<qlonglong>(n));
    return signedText ? localeSignedCount(n) : localeCount(n);
}

}  // namespace ratelab::gui
