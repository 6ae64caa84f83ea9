#include "gui/compare/compare_flips_model.h"

#include <algorithm>
#include <set>
#include <utility>

#include "gui/window/locale_text.h"

namespace ratelab::gui {

namespace {

CompareFlipsModel::Row instanceRow(const sim::InstanceChange& c, CompareFlipsModel::RowKind kind) {
    CompareFlipsModel::Row r;
    r.kind = kind;
    r.name = c.name;
    r.className = c.className;
    r.offered = c.b.offered;
    r.throttledA = c.a.throttled;
    r.throttledB = c.b.throttled;
    return r;
}

std::vector<CompareFlipsModel::Row> rowsOf(const sim::Comparison& c) {
    using Row = CompareFlipsModel::Row;
    using RowKind = CompareFlipsModel::RowKind;
    std::vector<Row> rows;
    std::set<std::pair<int, std::int64_t>> listed;
    for (const sim::InstanceChange& x : c.collateral) {
        rows.push_back(instanceRow(x, RowKind::Collateral));
        listed.insert({x.actor, x.instance});
    }
    for (const sim::InstanceChange& x : c.clients) {
        if (!listed.contains({x.actor, x.instance}))
            rows.push_back(instanceRow(x, RowKind::Client));
    }
    std::vector<const sim::ComparedActor*> actors;
    for (const sim::ComparedActor& a : c.actors) {
        if (a.flips.total() > 0) actors.push_back(&a);
    }
    std::stable_sort(actors.begin(), actors.end(),
                     [](const sim::ComparedActor* x, const sim::ComparedActor* y) {
                         return x->flips.total() > y->flips.total();
                     });
    for (const sim::ComparedActor* a : actors) {
        Row r;
        r.name = a->name;
        r.className = a->className;
        r.offered = a->a.offered;
        r.throttledA = a->a.throttled;
        r.throttledB = a->b.throttled;
        r.allowedToThrottled = a->flips.transitions[sim::kAllowedOutcome][sim::kThrottledOutcome];
        r.throttledToAllowed = a->flips.transitions[sim::kThrottledOutcome][sim::kAllowedOutcome];
        rows.push_back(std::move(r));
    }
    return rows;
}

QString summaryOf(const sim::Comparison& c) {
    QStringList parts;
    for (std::size_t i = 0; i < c.classNames.size(); ++i) {
        const sim::OutcomeFlips& f = c.classFlips[i];
        QString part =
            CompareFlipsModel::tr(
                "%1: %2 allowed under A and throttled under B, %3 "
                "the reverse")
                .arg(QString::fromStdString(c.classNames[i]))
                .arg(localeCount(f.transitions[sim::kAllowedOutcome][sim::kThrottledOutcome]))
                .arg(localeCount(f.transitions[sim::kThrottledOutcome][sim::kAllowedOutcome]));
        if (sim::isLegitimateClass(c.classNames[i])) {
            part += CompareFlipsModel::tr("; %1 instances collateral, %2 relieved")
                        .arg(localeCount(c.collateralPerClass[i]))
                        .arg(localeCount(c.relievedPerClass[i]));
        }
        parts << part;
    }
    const auto met = [](const std::vector<sim::ExpectationResult>& list) {
        return std::count_if(list.begin(), list.end(),
                             [](const sim::ExpectationResult& e) { return e.pass; });
    };
    if (!c.expectationsB.empty()) {
        parts << CompareFlipsModel::tr("B meets %1 of %2 expectations (A %3)")
                     .arg(met(c.expectationsB))
                     .arg(c.expectationsB.size())
                     .arg(met(c.expectationsA));
    }
    return CompareFlipsModel::tr("After %1 requests: %2.")
        .arg(localeCount(c.a.requests), parts.join(". "));
}

}  // namespace

CompareFlipsModel::CompareFlipsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareFlipsModel::setComparison(std::shared_ptr<const sim::Comparison> comparison) {
    // Rows come and go as the run goes on, so each comparison is a reset; it arrives a few
    // times a second at most, and the list is bounded (SimulationWorker::kComparisonTop).
    beginResetModel();
    rows_ = comparison ? rowsOf(*comparison) : std::vector<Row>{};
    endResetModel();
    QString summary = comparison ? summaryOf(*comparison) : QString();
    if (summary != summary_) {
        summary_ = std::move(summary);
        emit summaryChanged(summary_);
    }
}

int CompareFlipsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareFlipsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareFlipsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= Offered ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                         : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const Row& r = rows_[static_cast<std::size_t>(index.row())];
    const bool raw = role == Qt::UserRole;
    auto number = [raw](std::int64_t n, bool signedText = false) {
        return countCell(n, raw, signedText);
    };
    switch (index.column()) {
        case Kind:
            switch (r.kind) {
                case RowKind::Collateral:
                    return tr("collateral");
                case RowKind::Client:
                    return tr("client");
                case RowKind::Actor:
                    return tr("actor");
            }
            return {};
        case Name:
            return QString::fromStdString(r.name);
        case Class:
            return QString::fromStdString(r.className);
        case Offered:
            return number(r.offered);
        case ThrottledA:
            return number(r.throttledA);
        case ThrottledB:
            return number(r.throttledB);
        case ThrottledDelta:
            return number(r.throttledB - r.throttledA, true);
        case AllowedToThrottled:
            return r.allowedToThrottled < 0 ? QVariant() : number(r.allowedToThrottled);
        case ThrottledToAllowed:
            return r.throttledToAllowed < 0 ? QVariant() : number(r.throttledToAllowed);
        default:
            return {};
    }
}

QVariant CompareFlipsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Kind:
            return tr("Kind");
        case Name:
            return tr("Actor or client");
        case Class:
            return tr("Class");
        case Offered:
            return tr("Offered");
        case ThrottledA:
            return tr("Throttled A");
        case ThrottledB:
            return tr("Throttled B");
        case ThrottledDelta:
            return tr("Throttled \u0394 (B\u2212A)");
        case AllowedToThrottled:
            return tr("Allowed \u2192 throttled");
        case ThrottledToAllowed:
            return tr("Throttled \u2192 allowed");
        default:
            return {};
    }
}

}  // namespace ratelab::gui
