#include "gui/session/actor_table_model.h"

#include "gui/window/locale_text.h"

namespace ratelab::gui {

ActorTableModel::ActorTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ActorTableModel::setRows(std::vector<sim::ActorRow> rows) {
    bool sameActors = rows.size() == rows_.size();
    for (std::size_t i = 0; sameActors && i < rows.size(); ++i)
        sameActors = rows[i].name == rows_[i].name && rows[i].className == rows_[i].className;
    if (!sameActors) {
        beginResetModel();
        rows_ = std::move(rows);
        endResetModel();
        return;
    }
    if (rows_.empty()) return;
    rows_ = std::move(rows);
    emit dataChanged(index(0, Instances), index(rowCount() - 1, ColumnCount - 1),
                     {Qt::DisplayRole});
}

int ActorTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ActorTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ActorTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const sim::ActorRow& r = rows_[static_cast<std::size_t>(index.row())];
    const sim::ClassCounters& c = r.counters;
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= Instances ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                           : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const bool raw = role == Qt::UserRole;  // numbers for sorting and tests
    auto number = [raw](std::int64_t n) { return countCell(n, raw); };
    switch (index.column()) {
        case Actor:
            return QString::fromStdString(r.name);
        case Class:
            return QString::fromStdString(r.className);
        case Instances:
            return number(r.instances);
        case Offered:
            return number(c.offered);
        case Allowed:
            return number(c.allowed);
        case Throttled:
            return number(c.throttled);
        case Refused:
            return number(c.refused);
        case FailedOpen:
            return number(c.failedOpen);
        case FailedClosed:
            return number(c.failedClosed);
        case AllowedPercent: {
            const double pct = c.offered > 0 ? 100.0 * static_cast<double>(c.allowed) /
                                                   static_cast<double>(c.offered)
                                             : 0.0;
            return raw ? QVariant(pct) : QVariant(localeFixed(pct, 1));
        }
        default:
            return {};
    }
}

QString leadingActorColumnTitle(int column) {
    switch (column) {
        case ActorTableModel::Actor:
            return ActorTableModel::tr("Actor");
        case ActorTableModel::Class:
            return ActorTableModel::tr("Class");
        case ActorTableModel::Instances:
            return ActorTableModel::tr("Instances");
        case ActorTableModel::Offered:
            return ActorTableModel::tr("Offered");
        default:
            return {};
    }
}

QVariant ActorTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    if (section >= 0 && section < kLeadingActorColumns) return leadingActorColumnTitle(section);
    switch (section) {
        case Allowed:
            return tr("Allowed");
        case Throttled:
            return tr("Throttled (429)");
        case Refused:
            return tr("Refused (412)");
        case FailedOpen:
            return tr("Failed open");
        case FailedClosed:
            return tr("Failed closed (503)");
        case AllowedPercent:
            return tr("Allowed %");
        default:
            return {};
    }
}

}  // namespace ratelab::gui
