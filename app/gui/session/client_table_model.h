#pragma once

// A replayed log's clients: the busiest ones, each with the key its requests were charged to,
// and the rest summed in one row, so a log of millions of clients stays a table of a few hundred.

#include <QAbstractTableModel>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ratelab/limit.h"
#include "sim/report/counters.h"

namespace ratelab::gui {

/// One client of a replay (or, with `clients` > 1, the clients the table does not list).
struct ClientRow {
    std::int64_t instance = -1;  ///< the runner's instance; -1 for the others row
    std::string key;             ///< as the engine derived it (credentials hashed); empty: none
    std::int64_t requests = 0;
    std::int64_t throttled = 0;
    Nanos firstSeen = 0;  ///< virtual time since the log's first request
    Nanos lastSeen = 0;
    std::int64_t clients = 1;  ///< how many clients the row stands for
    friend bool operator==(const ClientRow&, const ClientRow&) = default;
};

/// The clients the table lists by name; the rest are summed into one "others" row.
inline constexpr std::size_t kTopClients = 200;

/// The `top` clients that sent the most requests (ties: the most throttled, then the earliest),
/// busiest first, then one row summing every other client that sent a request (when there is
/// any). `instances` and `seen` are indexed alike (ScenarioRunner::instances, ::clientsSeen).
/// O(clients) plus O(top log top).
std::vector<ClientRow> topClients(std::span<const sim::InstanceCounters> instances,
                                  std::span<const sim::ClientSeen> seen, std::size_t top);

/// GUI thread only. Sorting (QAbstractItemModel::sort) keeps the others row last.
class ClientTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Key, Requests, Throttled, FirstSeen, LastSeen, ColumnCount };

    explicit ClientTableModel(QObject* parent = nullptr);

    /// Replaces the rows (as topClients() orders them), sorted as the view last asked.
    void setRows(std::vector<ClientRow> rows);
    const std::vector<ClientRow>& rows() const { return rows_; }
    /// Whether the run replays a log (and this table stands for its actor table).
    void setReplaying(bool replaying);
    bool replaying() const { return replaying_; }
    /// The client drawn over the charts (Workbench::highlightClient), shown in bold on a tint;
    /// -1 none.
    void setHighlighted(std::int64_t instance);
    std::int64_t highlighted() const { return highlighted_; }
    /// The row of client `instance`, -1 when it is not listed.
    int rowOf(std::int64_t instance) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

signals:
    void replayingChanged(bool replaying);

private:
    void sortRows();

    std::vector<ClientRow> rows_;
    bool replaying_ = false;
    std::int64_t highlighted_ = -1;
    int sortColumn_ = -1;  // -1: topClients()' order
    Qt::SortOrder sortOrder_ = Qt::DescendingOrder;
};

}  // namespace ratelab::gui
