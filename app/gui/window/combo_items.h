#pragma once

// Combo boxes whose items carry an enum's value (the policy editor's algorithm, key and store
// fields).

#include <QComboBox>
#include <QString>

#include <algorithm>

namespace ratelab::gui {

/// Adds an item for `value`.
template <class E>
void addItem(QComboBox* box, const QString& text, E value) {
    box->addItem(text, static_cast<int>(value));
}

/// The current item's value.
template <class E>
E itemValue(const QComboBox* box) {
    return static_cast<E>(box->currentData().toInt());
}

/// Selects `value`'s item (the first item when there is none).
template <class E>
void selectItem(QComboBox* box, E value) {
    box->setCurrentIndex(std::max(0, box->findData(static_cast<int>(value))));
}

}  // namespace ratelab::gui
