#pragma once

// Compare mode's actor table: one row per scenario actor, its outcomes under A and under B and
// the difference, from the worker's latest sim::Comparison.

#include <QAbstractTableModel>

#include <memory>

#include "sim/decide/comparison.h"

namespace ratelab::gui {

/// GUI thread only.
class CompareActorModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Actor, Class, Instances, Offered, FirstOutcomeColumn };
    /// Which figure of an outcome a column shows. Delta is B - A, the sign `ratelab-cli diff`
    /// prints: positive when B gives more of the outcome.
    enum Side { A, B, Delta, SideCount };

    explicit CompareActorModel(QObject* parent = nullptr);

    /// The column of outcome `outcome` (an index into sim::kOutcomeFields) on `side`.
    static int columnOf(std::size_t outcome, Side side);

    /// Replaces the figures: a reset when the actors changed, dataChanged otherwise. Null
    /// clears the table (compare mode left).
    void setComparison(std::shared_ptr<const sim::Comparison> comparison);
    /// The comparison shown (null outside compare mode).
    const sim::Comparison* comparison() const { return comparison_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    /// Qt::UserRole gives the raw numbers (for sorting and tests).
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const sim::Comparison> comparison_;
};

/// "Failed closed": an outcome's name (sim::kOutcomeFields) as a column header reads it.
QString outcomeTitle(std::size_t outcome);

}  // namespace ratelab::gui
