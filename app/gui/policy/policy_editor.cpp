#include "gui/policy/policy_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "gui/window/combo_items.h"
#include "gui/window/locale_text.h"
#include "gui/policy/policy_document.h"
#include "gui/policy/policy_text_fields.h"

namespace ratelab::gui {

PolicyEditor::PolicyEditor(PolicyDocument& document, QWidget* parent)
    : QWidget(parent), document_(document) {
    buildForm();
    connect(&document_, &PolicyDocument::reloaded, this, &PolicyEditor::showDocument);
    connect(&document_, &PolicyDocument::diagnosticsChanged, this, &PolicyEditor::showDiagnostics);
    // An edit made elsewhere (a trade-off map cell, Suggest, an undo or redo) shows in the
    // form; the editor's own commits come back here with updating_ set and leave the form as
    // the user typed it.
    connect(&document_, &PolicyDocument::policyEdited, this, [this](std::size_t index) {
        if (updating_) return;
        const auto& policies = document_.policies().policies;
        if (index < policies.size())  // an undone rename shows in the picker too
            policyPicker_->setItemText(static_cast<int>(index),
                                       QString::fromStdString(policies[index].name));
        if (static_cast<int>(index) == currentPolicy()) showPolicy();
    });
    connect(&document_, &PolicyDocument::fileSectionsEdited, this, [this] {
        if (!updating_) showFileSections();
    });
    // Undoing or redoing an edit of a policy that is not on screen brings it on screen, so
    // the change can be seen (a step over several policies leaves the picker where it is).
    connect(&document_, &PolicyDocument::stepReplayed, this, [this](std::size_t policy) {
        if (policy != PolicyDocument::kAllPolicies &&
            static_cast<int>(policy) < policyPicker_->count() &&
            static_cast<int>(policy) != currentPolicy()) {
            policyPicker_->setCurrentIndex(static_cast<int>(policy));
        }
    });
    showDocument();
}

int PolicyEditor::currentPolicy() const {
    return policyPicker_->currentIndex();
}

QString PolicyEditor::changeName(QWidget* field) const {
    // The label the form shows beside the field (the field may sit in a row of two), or the
    // title of its group for a field that has a row of its own: "Capacity" -> "capacity
    // change", "IPv4 / IPv6 prefix" keeps its capitals.
    for (QWidget* w = field; w && w != this; w = w->parentWidget()) {
        QWidget* holder = w->parentWidget();
        auto* form = holder ? qobject_cast<QFormLayout*>(holder->layout()) : nullptr;
        if (!form) continue;
        QString name;
        if (auto* label = qobject_cast<QLabel*>(form->labelForField(w))) {
            name = label->text();
        } else if (auto* group = qobject_cast<QGroupBox*>(holder)) {
            name = group->title();
        }
        if (name.size() > 1 && name[1].isLower()) name[0] = name[0].toLower();
        if (!name.isEmpty()) return tr("%1 change").arg(name);
    }
    return {};
}

void PolicyEditor::commitStep(QWidget* field) {
    commitPolicy(field);
    document_.finishStep();
}

void PolicyEditor::showDocument() {
    updating_ = true;
    const PolicySet& set = document_.policies();
    {
        QSignalBlocker block(policyPicker_);
        const int keep = policyPicker_->currentIndex();
        policyPicker_->clear();
        for (const Policy& p : set.policies)
            policyPicker_->addItem(QString::fromStdString(p.name));
        policyPicker_->setCurrentIndex(
            keep >= 0 && keep < policyPicker_->count() ? keep : (set.policies.empty() ? -1 : 0));
    }
    updating_ = false;
    showFileSections();
    showPolicy();
    showDiagnostics();
}

void PolicyEditor::showFileSections() {
    const PolicySet& set = document_.policies();
    updating_ = true;
    selectItem(storeKind_, set.store.kind);
    maxBuckets_->setValue(
        static_cast<int>(std::min<std::int64_t>(set.store.maxBuckets, 2'000'000'000)));
    storeUrls_->setText(joinList(set.store.urls));
    storeNamespace_->setText(QString::fromStdString(set.store.keyNamespace));
    replicas_->setValue(set.store.replicas);
    proxyCidrs_->setText(cidrListText(set.trustedProxies.cidrs));
    proxyHeader_->setCurrentText(QString::fromStdString(set.trustedProxies.header));
    for (QLineEdit* e : {storeUrls_, storeNamespace_, proxyCidrs_})
        markField(e, true, {});
    updating_ = false;
}

void PolicyEditor::showPolicy() {
    const int index = policyPicker_->currentIndex();
    const auto& policies = document_.policies().policies;
    setEnabled(index >= 0 && index < static_cast<int>(policies.size()));
    if (!isEnabled()) return;
    const Policy& p = policies[static_cast<std::size_t>(index)];
    const bool wasUpdating = updating_;
    updating_ = true;
    // updating_ keeps the commits quiet while the fields are filled in.
    name_->setText(QString::fromStdString(p.name));
    pathPrefix_->setText(QString::fromStdString(p.match.pathPrefix));
    pathPattern_->setText(QString::fromStdString(p.match.pathPattern));
    methods_->setText(joinList(p.match.methods));
    selectItem(algorithm_, p.algorithm);
    capacity_->setValue(static_cast<int>(std::min<std::int64_t>(p.capacity, 1'000'000'000)));
    capacitySlider_->setValue(kCapacityScale.positionOf(static_cast<double>(p.capacity)));
    refill_->setValue(p.refillPerSecond);
    refillSlider_->setValue(kRefillScale.positionOf(p.refillPerSecond));
    windowMs_->setValue(static_cast<double>(p.windowMs));
    delay_->setValue(static_cast<int>(std::min<std::int64_t>(p.delay, 1'000'000'000)));
    nodelay_->setChecked(p.nodelay);
    cost_->setValue(static_cast<int>(std::min<std::int64_t>(p.cost, 1'000'000'000)));
    selectItem(keySource_, p.key.source);
    keyHeader_->setText(QString::fromStdString(p.key.header));
    keyParts_->setText(keyPartsText(p.key.parts));
    ipv4Prefix_->setValue(p.key.ipv4Prefix);
    ipv6Prefix_->setValue(p.key.ipv6Prefix);
    selectItem(unverified_, p.key.unverifiedAuthorization);
    budgetEnabled_->setChecked(p.budget.enabled);
    budgetPerPeer_->setValue(static_cast<int>(p.budget.perPeer));
    budgetGlobal_->setValue(static_cast<int>(p.budget.global));
    budgetTtlMs_->setValue(static_cast<double>(p.budget.slotTtl / kNanosPerMilli));
    ipv6Budget_->setText(addressBudgetsText(p.budget.ipv6Prefixes));
    ipv4Budget_->setText(addressBudgetsText(p.budget.ipv4Prefixes));
    selectItem(onStoreError_, p.onStoreError);
    storeTimeoutMs_->setValue(static_cast<int>(p.storeTimeout / kNanosPerMilli));
    selectItem(mode_, p.mode);
    selectItem(headers_, p.headers);
    bypassCidrs_->setText(cidrListText(p.bypass.cidrs));
    bypassPrincipals_->setText(joinList(p.bypass.principals));
    tierAttribute_->setText(p.tiers ? QString::fromStdString(p.tiers->attribute) : QString());
    tierDefault_->setText(p.tiers ? QString::fromStdString(p.tiers->defaultTier) : QString());
    tiers_->setRowCount(0);
    if (p.tiers) {
        for (const Tier& t : p.tiers->tiers) {
            const int r = tiers_->rowCount();
            tiers_->insertRow(r);
            tiers_->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(t.name)));
            tiers_->setItem(r, 1, new QTableWidgetItem(localeCount(t.capacity)));
            tiers_->setItem(r, 2, new QTableWidgetItem(localeShortest(t.refillPerSecond)));
            tiers_->setItem(r, 3, new QTableWidgetItem(localeCount(t.windowMs)));
        }
    }
    for (QLineEdit* e : {keyParts_, bypassCidrs_, ipv6Budget_, ipv4Budget_})
        markField(e, true, {});
    updating_ = wasUpdating;
    updateEnabledFields();
}

bool PolicyEditor::markField(QLineEdit* field, bool ok, const QString& error) {
    field->setStyleSheet(ok ? QString() : QStringLiteral("QLineEdit { background: #ffd9d9; }"));
    field->setToolTip(ok ? QString() : error);
    return ok;
}

void PolicyEditor::commitPolicy(QWidget* field) {
    if (updating_) return;
    const int index = policyPicker_->currentIndex();
    const auto& policies = document_.policies().policies;
    if (index < 0 || index >= static_cast<int>(policies.size())) return;
    // Start from the document's policy: a field that does not parse keeps its last good value
    // there, while its text stays in the form, marked, for the user to fix.
    Policy p = policies[static_cast<std::size_t>(index)];
    p.name = name_->text().trimmed().toStdString();
    p.match.pathPrefix = pathPrefix_->text().trimmed().toStdString();
    p.match.pathPattern = pathPattern_->text().trimmed().toStdString();
    p.match.methods.clear();
    for (std::string m : splitList(methods_->text())) {
        for (char& c : m)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        p.match.methods.push_back(std::move(m));
    }
    p.algorithm = itemValue<Algorithm>(algorithm_);
    p.capacity = capacity_->value();
    p.refillPerSecond = refill_->value();
    p.windowMs = static_cast<std::int64_t>(windowMs_->value());
    p.delay = delay_->value();
    p.nodelay = nodelay_->isChecked();
    p.cost = cost_->value();
    p.key.source = itemValue<KeySource>(keySource_);
    p.key.header = keyHeader_->text().trimmed().toStdString();
    QString error;
    if (auto parts = parseKeyParts(keyParts_->text(), error);
        markField(keyParts_, parts.has_value(), error)) {
        p.key.parts = std::move(*parts);
    }
    p.key.ipv4Prefix = ipv4Prefix_->value();
    p.key.ipv6Prefix = ipv6Prefix_->value();
    p.key.unverifiedAuthorization = itemValue<UnverifiedAuthorization>(unverified_);
    p.budget.enabled = budgetEnabled_->isChecked();
    p.budget.perPeer = static_cast<std::uint32_t>(budgetPerPeer_->value());
    p.budget.global = static_cast<std::uint32_t>(budgetGlobal_->value());
    p.budget.slotTtl = static_cast<Nanos>(budgetTtlMs_->value()) * kNanosPerMilli;
    if (auto levels = parseAddressBudgets(ipv6Budget_->text(), 128, error);
        markField(ipv6Budget_, levels.has_value(), error)) {
        p.budget.ipv6Prefixes = std::move(*levels);
    }
    if (auto levels = parseAddressBudgets(ipv4Budget_->text(), 32, error);
        markField(ipv4Budget_, levels.has_value(), error)) {
        p.budget.ipv4Prefixes = std::move(*levels);
    }
    p.onStoreError = itemValue<StoreErrorRule>(onStoreError_);
    p.storeTimeout = static_cast<Nanos>(storeTimeoutMs_->value()) * kNanosPerMilli;
    p.mode = itemValue<PolicyMode>(mode_);
    p.headers = itemValue<HeaderStyle>(headers_);
    if (auto cidrs = parseCidrList(bypassCidrs_->text(), error);
        markField(bypassCidrs_, cidrs.has_value(), error)) {
        p.bypass.cidrs = std::move(*cidrs);
    }
    p.bypass.principals = splitList(bypassPrincipals_->text());

    const QString attribute = tierAttribute_->text().trimmed();
    if (attribute.isEmpty() && tiers_->rowCount() == 0) {
        p.tiers.reset();
    } else {
        TierConfig tiers;
        tiers.attribute = attribute.toStdString();
        tiers.defaultTier = tierDefault_->text().trimmed().toStdString();
        for (int r = 0; r < tiers_->rowCount(); ++r) {
            auto cell = [this, r](int c) {
                const QTableWidgetItem* item = tiers_->item(r, c);
                return item ? item->text().trimmed() : QString();
            };
            Tier t;
            t.name = cell(0).toStdString();
            // In the user's locale, as shown ("1.000" and "2,5" under German).
            t.capacity = std::llround(parseLocaleNumber(cell(1)));
            t.refillPerSecond = parseLocaleNumber(cell(2));
            t.windowMs = std::llround(parseLocaleNumber(cell(3)));
            tiers.tiers.push_back(std::move(t));
        }
        p.tiers = std::move(tiers);
    }
    updating_ = true;
    document_.setPolicy(static_cast<std::size_t>(index), std::move(p), changeName(field));
    updating_ = false;
    if (policyPicker_->itemText(index) != name_->text().trimmed()) {
        policyPicker_->setItemText(index, name_->text().trimmed());
    }
    updateEnabledFields();
}

void PolicyEditor::commitFileSections(QWidget* field) {
    if (updating_) return;
    const QString change = changeName(field);
    StoreConfig store = document_.policies().store;
    store.kind = itemValue<StoreConfig::Kind>(storeKind_);
    store.maxBuckets = maxBuckets_->value();
    store.urls = splitList(storeUrls_->text());
    store.keyNamespace = storeNamespace_->text().trimmed().toStdString();
    store.replicas = replicas_->value();
    // The form keeps what the user typed (a list that does not parse stays, marked).
    updating_ = true;
    document_.setStore(std::move(store), change);
    updating_ = false;

    TrustedProxies proxies = document_.policies().trustedProxies;
    QString error;
    if (auto cidrs = parseCidrList(proxyCidrs_->text(), error);
        markField(proxyCidrs_, cidrs.has_value(), error)) {
        proxies.cidrs = std::move(*cidrs);
    }
    proxies.header = proxyHeader_->currentText().toStdString();
    updating_ = true;
    document_.setTrustedProxies(std::move(proxies), change);
    updating_ = false;
}

void PolicyEditor::updateEnabledFields() {
    const auto a = itemValue<Algorithm>(algorithm_);
    const bool rate = isRateAlgorithm(a);
    refill_->setEnabled(rate);
    refillSlider_->setEnabled(rate);
    windowMs_->setEnabled(!rate);
    delay_->setEnabled(a == Algorithm::LeakyBucket);
    nodelay_->setEnabled(a == Algorithm::LeakyBucket);
    const auto source = itemValue<KeySource>(keySource_);
    keyHeader_->setEnabled(source == KeySource::Header);
    keyParts_->setEnabled(source == KeySource::Composite);
    const bool budgetOn = budgetEnabled_->isChecked();
    budgetPerPeer_->setEnabled(budgetOn);
    budgetGlobal_->setEnabled(budgetOn);
    budgetTtlMs_->setEnabled(budgetOn);
    ipv6Budget_->setEnabled(budgetOn);
    ipv4Budget_->setEnabled(budgetOn);
}

void PolicyEditor::showDiagnostics() {
    const auto& all = document_.diagnostics();
    if (all.empty()) {
        diagnostics_->setText(
            tr("<span style='color:#2e7d32'>&#10003; The policy set is valid.</span>"));
        return;
    }
    QString html;
    for (const Diagnostic& d : all) {
        const bool error = d.severity == Diagnostic::Severity::Error;
        html += QStringLiteral("<div style='color:%1'>%2: %3%4</div>")
                    .arg(error ? "#b71c1c" : "#8a6d00", error ? tr("error") : tr("warning"),
                         QString::fromStdString(d.message).toHtmlEscaped(),
                         d.pointer.empty()
                             ? QString()
                             : QStringLiteral(" <i>(at %1)</i>")
                                   .arg(QString::fromStdString(d.pointer).toHtmlEscaped()));
    }
    diagnostics_->setText(html);
}

}  // namespace ratelab::gui
