#include "gui/compare/compare_actor_model.h"

#include "gui/session/actor_table_model.h"
#include "gui/window/locale_text.h"

namespace ratelab::gui {

namespace {

static_assert(CompareActorModel::FirstOutcomeColumn == kLeadingActorColumns,
              "compare mode's actor table starts with the live table's columns");

std::size_t actorCount(const sim::Comparison* c) {
    return c ? c->actors.size() : 0;
}

}  // namespace

QString outcomeTitle(std::size_t outcome) {
    QString name =
        QString::fromUtf8(sim::kOutcomeFields[outcome].name.data(),
                          static_cast<qsizetype>(sim::kOutcomeFields[outcome].name.size()));
    name.replace('_', ' ');
    if (!name.isEmpty()) name[0] = name[0].toUpper();
    return name;
}

CompareActorModel::CompareActorModel(QObject* parent) : QAbstractTableModel(parent) {}

int CompareActorModel::columnOf(std::size_t outcome, Side side) {
    return FirstOutcomeColumn + static_cast<int>(outcome) * SideCount + side;
}

void CompareActorModel::setComparison(std::shared_ptr<const sim::Comparison> comparison) {
    bool sameActors = actorCount(comparison.get()) == actorCount(comparison_.get());
    for (std::size_t i = 0; sameActors && i < actorCount(comparison.get()); ++i) {
        sameActors = comparison->actors[i].name == comparison_->actors[i].name &&
                     comparison->actors[i].className == comparison_->actors[i].className;
    }
    if (!sameActors) {
        beginResetModel();
        comparison_ = std::move(comparison);
        endResetModel();
        return;
    }
    comparison_ = std::move(comparison);
    if (rowCount() > 0) {
        emit dataChanged(index(0, Instances), index(rowCount() - 1, columnCount() - 1),
                         {Qt::DisplayRole});
    }
}

int CompareActorModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(actorCount(comparison_.get()));
}

int CompareActorModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : columnOf(sim::kOutcomeCount, A);
}

QVariant CompareActorModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= Instances ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                           : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const sim::ComparedActor& r = comparison_->actors[static_cast<std::size_t>(index.row())];
    const bool raw = role == Qt::UserRole;
    auto number = [raw](std::int64_t n, bool signedText = false) {
        return countCell(n, raw, signedText);
    };
    switch (index.column()) {
        case Actor:
            return QString::fromStdString(r.name);
        case Class:
            return QString::fromStdString(r.className);
        case Instances:
            return number(r.instances);
        case Offered:
            return number(r.a.offered);
        default:
            break;
    }
    const int k = index.column() - FirstOutcomeColumn;
    const auto outcome = static_cast<std::size_t>(k / SideCount);
    if (outcome >= sim::kOutcomeCount) return {};
    const auto member = sim::kOutcomeFields[outcome].member;
    switch (static_cast<Side>(k % SideCount)) {
        case A:
            return number(r.a.*member);
        case B:
            return number(r.b.*member);
        default:
            return number(r.b.*member - r.a.*member, true);
    }
}

QVariant CompareActorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole && section >= FirstOutcomeColumn &&
        (section - FirstOutcomeColumn) % SideCount == Delta) {
        return tr("B minus A: positive when B gives more of it");
    }
    if (role != Qt::DisplayRole) return {};
    if (section >= 0 && section < kLeadingActorColumns) return leadingActorColumnTitle(section);
    const int k = section - FirstOutcomeColumn;
    const auto outcome = static_cast<std::size_t>(k / SideCount);
    if (k < 0 || outcome >= sim::kOutcomeCount) return {};
    static const char* const kSides[] = {"A", "B", "\u0394 (B\u2212A)"};
    return QStringLiteral("%1 %2").arg(outcomeTitle(outcome),
                                       QString::fromUtf8(kSides[k % SideCount]));
}

}  // namespace ratelab::gui
