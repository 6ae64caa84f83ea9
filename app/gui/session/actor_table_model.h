#pragma once

// The per-actor results table: one row per scenario actor, totals since the start of the run.

#include <QAbstractTableModel>

#include <vector>

#include "sim/report/counters.h"

namespace ratelab::gui {

/// GUI thread only.
class ActorTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Actor,
        Class,
        Instances,
        Offered,
        Allowed,
        Throttled,
        Refused,
        FailedOpen,
        FailedClosed,
        AllowedPercent,
        ColumnCount
    };

    explicit ActorTableModel(QObject* parent = nullptr);

    /// Replaces the rows: a reset when the actors changed, dataChanged otherwise.
    void setRows(std::vector<sim::ActorRow> rows);
    const std::vector<sim::ActorRow>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::vector<sim::ActorRow> rows_;
};

/// How many columns every actor table starts with, the same in this table and in compare mode's
/// (CompareActorModel): Actor, Class, Instances, Offered.
inline constexpr int kLeadingActorColumns = ActorTableModel::Allowed;

/// The title of leading column `column` of an actor table. REQUIRES: column < kLeadingActorColumns.
QString leadingActorColumnTitle(int column);

}  // namespace ratelab::gui
