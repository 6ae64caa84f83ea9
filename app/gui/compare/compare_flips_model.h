#pragma once

// Compare mode's flips tab: who the change from A to B affects most. First the legitimate
// instances that become collateral (throttled under B, never under A), then, for a replayed
// log, the other clients whose outcome changed, then the actors whose requests flip, the most
// flips first. From the worker's latest sim::Comparison.

#include <QAbstractTableModel>

#include <memory>
#include <vector>

#include "sim/decide/comparison.h"

namespace ratelab::gui {

/// GUI thread only.
class CompareFlipsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Kind,
        Name,
        Class,
        Offered,
        ThrottledA,
        ThrottledB,
        ThrottledDelta,      ///< B - A
        AllowedToThrottled,  ///< actors only: requests allowed under A, throttled under B
        ThrottledToAllowed,  ///< and the reverse
        ColumnCount
    };
    enum class RowKind { Collateral, Client, Actor };

    struct Row {
        RowKind kind = RowKind::Actor;
        std::string name;
        std::string className;
        std::int64_t offered = 0;
        std::int64_t throttledA = 0;
        std::int64_t throttledB = 0;
        std::int64_t allowedToThrottled = -1;  ///< -1 for instances: not counted per instance
        std::int64_t throttledToAllowed = -1;
    };

    explicit CompareFlipsModel(QObject* parent = nullptr);

    /// Rebuilds the rows (null clears them).
    void setComparison(std::shared_ptr<const sim::Comparison> comparison);
    const std::vector<Row>& rows() const { return rows_; }
    /// One paragraph: per class the flips each way and the collateral, and which expectations
    /// B and A meet. Empty outside compare mode.
    const QString& summary() const { return summary_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    /// Qt::UserRole gives the raw numbers (for sorting and tests).
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    void summaryChanged(const QString& summary);

private:
    std::vector<Row> rows_;
    QString summary_;
};

}  // namespace ratelab::gui
