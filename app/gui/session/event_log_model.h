#pragma once

// The log of limit hits and store failures: the newest kMaxRows entries, oldest first. Keys
// appear only as the engine's keyed hash.

#include <QAbstractTableModel>

#include <deque>
#include <vector>

#include "sim/report/counters.h"

namespace ratelab::gui {

/// GUI thread only.
class EventLogModel : public QAbstractTableModel {
    Q_OBJECT

public:
    static constexpr int kMaxRows = 1000;
    enum Column { Time, Actor, Policy, Outcome, Key, Detail, ColumnCount };

    explicit EventLogModel(QObject* parent = nullptr);

    /// Appends entries (oldest first); the oldest rows go once there are more than kMaxRows.
    void append(const std::vector<sim::LogEntry>& entries);
    void clear();
    /// Entries appended since the last clear(), including those no longer kept.
    std::int64_t total() const { return total_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    std::deque<sim::LogEntry> rows_;
    std::int64_t total_ = 0;
};

}  // namespace ratelab::gui
