#include "gui/session/client_table_model.h"

#include <QColor>
#include <QFont>

#include <algorithm>
#include <tuple>

#include "gui/window/locale_text.h"

namespace ratelab::gui {

namespace {

// Busiest first: the most requests, then the most throttled, then the earliest seen.
bool busier(const ClientRow& a, const ClientRow& b) {
    return std::tuple(a.requests, a.throttled, -a.firstSeen, -a.instance) >
           std::tuple(b.requests, b.throttled, -b.firstSeen, -b.instance);
}

double seconds(Nanos t) {
    return static_cast<double>(t) / static_cast<double>(kNanosPerSecond);
}

}  // namespace

std::vector<ClientRow> topClients(std::span<const sim::InstanceCounters> instances,
                                  std::span<const sim::ClientSeen> seen, std::size_t top) {
    std::vector<ClientRow> all;
    const std::size_t n = std::min(instances.size(), seen.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (instances[i].offered == 0) continue;
        all.push_back(ClientRow{static_cast<std::int64_t>(i), seen[i].key, instances[i].offered,
                                instances[i].throttled, seen[i].firstSeen, seen[i].lastSeen, 1});
    }
    const std::size_t listed = std::min(top, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(listed), all.end(),
                      busier);
    if (listed == all.size()) return all;
    ClientRow others;
    others.clients = 0;
    others.firstSeen = all[listed].firstSeen;
    others.lastSeen = all[listed].lastSeen;
    for (std::size_t i = listed; i < all.size(); ++i) {
        others.requests += all[i].requests;
        others.throttled += all[i].throttled;
        others.firstSeen = std::min(others.firstSeen, all[i].firstSeen);
        others.lastSeen = std::max(others.lastSeen, all[i].lastSeen);
        others.clients += 1;
    }
    all.resize(listed);
    all.push_back(std::move(others));
    return all;
}

ClientTableModel::ClientTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ClientTableModel::setRows(std::vector<ClientRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    sortRows();
    endResetModel();
}

void ClientTableModel::setReplaying(bool replaying) {
    if (replaying == replaying_) return;
    replaying_ = replaying;
    emit replayingChanged(replaying_);
}

void ClientTableModel::setHighlighted(std::int64_t instance) {
    if (instance == highlighted_) return;
    const int before = rowOf(highlighted_);
    highlighted_ = instance;
    for (int row : {before, rowOf(highlighted_)}) {
        if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
}

int ClientTableModel::rowOf(std::int64_t instance) const {
    if (instance < 0) return -1;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        if (rows_[i].instance == instance) return static_cast<int>(i);
    }
    return -1;
}

int ClientTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ClientTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ClientTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const ClientRow& r = rows_[static_cast<std::size_t>(index.row())];
    if (role == Qt::TextAlignmentRole) {
        return index.column() == Key ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                     : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (r.instance >= 0 && r.instance == highlighted_) {
        if (role == Qt::FontRole) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        if (role == Qt::BackgroundRole) return QColor(255, 228, 196);
    }
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const bool raw = role == Qt::UserRole;  // numbers for sorting and tests
    switch (index.column()) {
        case Key:
            if (r.instance < 0) return tr("%n other clients", nullptr, static_cast<int>(r.clients));
            return r.key.empty() ? tr("(no policy matched)") : QString::fromStdString(r.key);
        case Requests:
            return countCell(r.requests, raw);
        case Throttled:
            return countCell(r.throttled, raw);
        case FirstSeen:
            return raw ? QVariant(seconds(r.firstSeen))
                       : QVariant(localeFixed(seconds(r.firstSeen), 3));
        case LastSeen:
            return raw ? QVariant(seconds(r.lastSeen))
                       : QVariant(localeFixed(seconds(r.lastSeen), 3));
        default:
            return {};
    }
}

QVariant ClientTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Key:
            return tr("Client (key)");
        case Requests:
            return tr("Requests");
        case Throttled:
            return tr("Throttled (429)");
        case FirstSeen:
            return tr("First seen (s)");
        case LastSeen:
            return tr("Last seen (s)");
        default:
            return {};
    }
}

void ClientTableModel::sort(int column, Qt::SortOrder order) {
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    sortColumn_ = column;
    sortOrder_ = order;
    sortRows();
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

void ClientTableModel::sortRows() {
    if (sortColumn_ < 0 || sortColumn_ >= ColumnCount) return;
    // The others row stays last whatever the order: it is not a client.
    const auto end = std::stable_partition(rows_.begin(), rows_.end(),
                                           [](const ClientRow& r) { return r.instance >= 0; });
    const int column = sortColumn_;
    const bool ascending = sortOrder_ == Qt::AscendingOrder;
    std::stable_sort(rows_.begin(), end,
                     [column, ascending](const ClientRow& a, const ClientRow& b) {
                         auto less = [column](const ClientRow& x, const ClientRow& y) {
                             switch (column) {
                                 case Key:
                                     return x.key < y.key;
                                 case Requests:
                                     return x.requests < y.requests;
                                 case Throttled:
                                     return x.throttled < y.throttled;
                                 case FirstSeen:
                                     return x.firstSeen < y.firstSeen;
                                 default:
                                     return x.lastSeen < y.lastSeen;
                             }
                         };
                         return ascending ? less(a, b) : less(b, a);
                     });
}

}  // namespace ratelab::gui
