#include "gui/session/event_log_model.h"

#include <QBrush>
#include <QColor>

#include "gui/window/locale_text.h"

namespace ratelab::gui {

EventLogModel::EventLogModel(QObject* parent) : QAbstractTableModel(parent) {}

void EventLogModel::append(const std::vector<sim::LogEntry>& entries) {
    if (entries.empty()) return;
    total_ += static_cast<std::int64_t>(entries.size());
    const std::size_t max = kMaxRows;
    if (entries.size() >= max) {
        beginResetModel();
        rows_.assign(entries.end() - static_cast<std::ptrdiff_t>(max), entries.end());
        endResetModel();
        return;
    }
    const std::size_t overflow =
        rows_.size() + entries.size() > max ? rows_.size() + entries.size() - max : 0;
    if (overflow > 0) {
        beginRemoveRows({}, 0, static_cast<int>(overflow) - 1);
        rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(overflow));
        endRemoveRows();
    }
    const int first = static_cast<int>(rows_.size());
    beginInsertRows({}, first, first + static_cast<int>(entries.size()) - 1);
    rows_.insert(rows_.end(), entries.begin(), entries.end());
    endInsertRows();
}

void EventLogModel::clear() {
    beginResetModel();
    rows_.clear();
    total_ = 0;
    endResetModel();
}

int EventLogModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int EventLogModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EventLogModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const sim::LogEntry& e = rows_[static_cast<std::size_t>(index.row())];
    const bool storeFailure = !e.error.empty();
    if (role == Qt::ForegroundRole && storeFailure) return QBrush(QColor(170, 30, 30));
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Time:
            return localeFixed(static_cast<double>(e.at) / 1e9, 3);
        case Actor:
            return QString::fromStdString(e.actor);
        case Policy:
            return QString::fromStdString(e.policy);
        case Outcome:
            return QString::fromUtf8(policyOutcomeName(e.outcome).data(),
                                     static_cast<qsizetype>(policyOutcomeName(e.outcome).size()));
        case Key:
            return QString::fromStdString(e.keyHash);
        case Detail:
            if (storeFailure) return QString::fromStdString(e.error);
            return e.retryAfter > 0
                       ? tr("retry after %1 ms")
                             .arg(localeFixed(static_cast<double>(e.retryAfter) / 1e6, 1))
                       : QString();
        default:
            return {};
    }
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Time:
            return tr("Time (s)");
        case Actor:
            return tr("Actor");
        case Policy:
            return tr("Policy");
        case Outcome:
            return tr("Outcome");
        case Key:
            return tr("Key (hashed)");
        case Detail:
            return tr("Detail");
        default:
            return {};
    }
}

}  // namespace ratelab::gui
