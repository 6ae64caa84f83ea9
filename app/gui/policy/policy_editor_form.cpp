// The policy editor's form: every field's widget, laid out in its group, and the signals that
// commit an edit (the rest of the editor: policy_editor.cpp).

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
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "gui/window/combo_items.h"
#include "gui/window/locale_text.h"
#include "gui/policy/policy_document.h"
#include "gui/policy/policy_editor.h"
#include "gui/policy/policy_text_fields.h"

namespace ratelab::gui {

namespace {

constexpr double kMaxDurationMs = static_cast<double>(kMaxDuration / kNanosPerMilli);

QSlider* logSlider(QWidget* parent) {
    auto* s = new QSlider(Qt::Horizontal, parent);
    s->setRange(0, LogScale::kSteps);
    s->setPageStep(LogScale::kSteps / 20);
    return s;
}

QWidget* row(QWidget* a, QWidget* b, QWidget* parent) {
    auto* w = new QWidget(parent);
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(a, 0);
    l->addWidget(b, 1);
    return w;
}

QFormLayout* formIn(QGroupBox* box) {
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setContentsMargins(6, 4, 6, 4);
    form->setVerticalSpacing(3);
    return form;
}

}  // namespace

void PolicyEditor::buildForm() {
    auto* top = new QVBoxLayout(this);
    top->setContentsMargins(4, 4, 4, 4);
    top->setSpacing(6);

    policyPicker_ = new QComboBox(this);
    policyPicker_->setObjectName("policyPicker");
    policyPicker_->setToolTip(
        tr("Policies are charged in this order; a request is refused if "
           "any of them refuses"));
    auto* pickRow = new QHBoxLayout;
    pickRow->addWidget(new QLabel(tr("Policy"), this));
    pickRow->addWidget(policyPicker_, 1);
    top->addLayout(pickRow);
    connect(policyPicker_, &QComboBox::currentIndexChanged, this, &PolicyEditor::showPolicy);

    // --- Limit: the numbers the sliders retune live.
    auto* limitBox = new QGroupBox(tr("Limit (sliders retune the running engine)"), this);
    auto* limit = formIn(limitBox);
    algorithm_ = new QComboBox(limitBox);
    algorithm_->setObjectName("algorithmBox");
    for (Algorithm a :
         {Algorithm::TokenBucket, Algorithm::Gcra, Algorithm::FixedWindow, Algorithm::SlidingWindow,
          Algorithm::SlidingLog, Algorithm::LeakyBucket, Algorithm::HaproxyRate}) {
        const std::string_view n = algorithmName(a);
        addItem(algorithm_, QString::fromUtf8(n.data(), static_cast<qsizetype>(n.size())), a);
    }
    limit->addRow(tr("Algorithm"), algorithm_);

    capacity_ = new QSpinBox(limitBox);
    capacity_->setObjectName("capacitySpin");
    capacity_->setRange(0, 1'000'000'000);
    capacity_->setToolTip(
        tr("Burst in tokens; for window algorithms the quota per window; for "
           "the leaky bucket nginx's burst; for haproxy_rate the X of HAProxy's gt X"));
    capacitySlider_ = logSlider(limitBox);
    capacitySlider_->setObjectName("capacitySlider");
    limit->addRow(tr("Capacity"), row(capacity_, capacitySlider_, limitBox));

    refill_ = new QDoubleSpinBox(limitBox);
    refill_->setObjectName("refillSpin");
    refill_->setDecimals(3);
    refill_->setRange(0.0, 1e9);
    refill_->setSuffix(tr(" /s"));
    refill_->setToolTip(tr("Tokens added per second (rate algorithms)"));
    refillSlider_ = logSlider(limitBox);
    refillSlider_->setObjectName("refillSlider");
    limit->addRow(tr("Refill"), row(refill_, refillSlider_, limitBox));

    windowMs_ = new QDoubleSpinBox(limitBox);
    windowMs_->setDecimals(0);
    windowMs_->setRange(0, kMaxDurationMs);
    windowMs_->setSuffix(tr(" ms"));
    limit->addRow(tr("Window"), windowMs_);
    delay_ = new QSpinBox(limitBox);
    delay_->setRange(0, 1'000'000'000);
    nodelay_ = new QCheckBox(tr("nodelay"), limitBox);
    limit->addRow(tr("Delay (leaky)"), row(delay_, nodelay_, limitBox));
    cost_ = new QSpinBox(limitBox);
    cost_->setRange(0, 1'000'000'000);
    limit->addRow(tr("Cost"), cost_);
    mode_ = new QComboBox(limitBox);
    addItem(mode_, tr("enforce"), PolicyMode::Enforce);
    addItem(mode_, tr("shadow (count, never refuse)"), PolicyMode::Shadow);
    limit->addRow(tr("Mode"), mode_);
    top->addWidget(limitBox);

    // --- Route.
    auto* routeBox = new QGroupBox(tr("Route"), this);
    auto* route = formIn(routeBox);
    name_ = new QLineEdit(routeBox);
    route->addRow(tr("Name"), name_);
    pathPrefix_ = new QLineEdit(routeBox);
    route->addRow(tr("Path prefix"), pathPrefix_);
    pathPattern_ = new QLineEdit(routeBox);
    pathPattern_->setPlaceholderText(tr("e.g. /api/*/items (instead of the prefix)"));
    route->addRow(tr("Path pattern"), pathPattern_);
    methods_ = new QLineEdit(routeBox);
    methods_->setPlaceholderText(tr("every method"));
    route->addRow(tr("Methods"), methods_);
    top->addWidget(routeBox);

    // --- Key.
    auto* keyBox = new QGroupBox(tr("Client key"), this);
    auto* key = formIn(keyBox);
    keySource_ = new QComboBox(keyBox);
    keySource_->setObjectName("keySourceBox");
    addItem(keySource_, tr("default chain"), KeySource::Default);
    addItem(keySource_, tr("peer address"), KeySource::Peer);
    addItem(keySource_, tr("header"), KeySource::Header);
    addItem(keySource_, tr("principal"), KeySource::Principal);
    addItem(keySource_, tr("composite"), KeySource::Composite);
    key->addRow(tr("Source"), keySource_);
    keyHeader_ = new QLineEdit(keyBox);
    keyHeader_->setPlaceholderText(tr("x-api-key"));
    key->addRow(tr("Header"), keyHeader_);
    keyParts_ = new QLineEdit(keyBox);
    keyParts_->setPlaceholderText(tr("route, attribute:account"));
    key->addRow(tr("Parts"), keyParts_);
    ipv4Prefix_ = new QSpinBox(keyBox);
    ipv4Prefix_->setRange(0, 32);
    ipv4Prefix_->setPrefix("/");
    ipv6Prefix_ = new QSpinBox(keyBox);
    ipv6Prefix_->setRange(0, 128);
    ipv6Prefix_->setPrefix("/");
    key->addRow(tr("IPv4 / IPv6 prefix"), row(ipv4Prefix_, ipv6Prefix_, keyBox));
    unverified_ = new QComboBox(keyBox);
    addItem(unverified_, tr("budget per peer"), UnverifiedAuthorization::Budget);
    addItem(unverified_, tr("ignore (key on peer)"), UnverifiedAuthorization::Ignore);
    key->addRow(tr("Unverified auth"), unverified_);
    top->addWidget(keyBox);

    // --- Budget.
    auto* budgetBox = new QGroupBox(tr("Bucket budget"), this);
    auto* budget = formIn(budgetBox);
    budgetEnabled_ =
        new QCheckBox(tr("cap the keys one peer (and one network) can create"), budgetBox);
    budget->addRow(budgetEnabled_);
    budgetPerPeer_ = new QSpinBox(budgetBox);
    budgetPerPeer_->setRange(0, 1'000'000'000);
    budgetGlobal_ = new QSpinBox(budgetBox);
    budgetGlobal_->setRange(0, 1'000'000'000);
    budget->addRow(tr("Per peer / global"), row(budgetPerPeer_, budgetGlobal_, budgetBox));
    budgetTtlMs_ = new QDoubleSpinBox(budgetBox);
    budgetTtlMs_->setDecimals(0);
    budgetTtlMs_->setRange(0, kMaxDurationMs);
    budgetTtlMs_->setSuffix(tr(" ms"));
    // 0 is the policy file's unwritten slot_ttl_ms: 60 s, or the time to refill when longer.
    budgetTtlMs_->setSpecialValueText(tr("follows the refill"));
    budget->addRow(tr("Slot TTL"), budgetTtlMs_);
    ipv6Budget_ = new QLineEdit(budgetBox);
    ipv6Budget_->setPlaceholderText(tr("none, e.g. /48 1024, /32 65536"));
    ipv6Budget_->setToolTip(tr("Address budget: buckets each enclosing IPv6 network may hold "
                               "(longest prefix first); over it, the network's own bucket"));
    budget->addRow(tr("IPv6 networks"), ipv6Budget_);
    ipv4Budget_ = new QLineEdit(budgetBox);
    ipv4Budget_->setPlaceholderText(tr("none, e.g. /24 256"));
    budget->addRow(tr("IPv4 networks"), ipv4Budget_);
    top->addWidget(budgetBox);

    // --- Store errors, headers, bypass.
    auto* behaviourBox = new QGroupBox(tr("Store errors, headers, bypass"), this);
    auto* behaviour = formIn(behaviourBox);
    onStoreError_ = new QComboBox(behaviourBox);
    addItem(onStoreError_, tr("fail open on transport"), StoreErrorRule::FailOpenOnTransport);
    addItem(onStoreError_, tr("deny (503)"), StoreErrorRule::Deny);
    addItem(onStoreError_, tr("local (1/replicas of the limit)"), StoreErrorRule::Local);
    behaviour->addRow(tr("On store error"), onStoreError_);
    storeTimeoutMs_ = new QSpinBox(behaviourBox);
    storeTimeoutMs_->setRange(0, 600'000);
    storeTimeoutMs_->setSuffix(tr(" ms"));
    behaviour->addRow(tr("Store timeout"), storeTimeoutMs_);
    headers_ = new QComboBox(behaviourBox);
    addItem(headers_, "ietf", HeaderStyle::Ietf);
    addItem(headers_, "draft7", HeaderStyle::Draft7);
    addItem(headers_, "legacy", HeaderStyle::Legacy);
    addItem(headers_, "none", HeaderStyle::None);
    behaviour->addRow(tr("Header style"), headers_);
    bypassCidrs_ = new QLineEdit(behaviourBox);
    bypassCidrs_->setPlaceholderText(tr("10.0.0.0/8, 2001:db8::/32"));
    behaviour->addRow(tr("Bypass CIDRs"), bypassCidrs_);
    bypassPrincipals_ = new QLineEdit(behaviourBox);
    behaviour->addRow(tr("Bypass principals"), bypassPrincipals_);
    top->addWidget(behaviourBox);

    // --- Tiers.
    auto* tierBox = new QGroupBox(tr("Plan tiers"), this);
    auto* tier = formIn(tierBox);
    tierAttribute_ = new QLineEdit(tierBox);
    tierAttribute_->setPlaceholderText(tr("none (e.g. plan)"));
    tierDefault_ = new QLineEdit(tierBox);
    tier->addRow(tr("Attribute / default"), row(tierAttribute_, tierDefault_, tierBox));
    tiers_ = new QTableWidget(0, 4, tierBox);
    tiers_->setHorizontalHeaderLabels(
        {tr("Tier"), tr("Capacity"), tr("Refill /s"), tr("Window ms")});
    tiers_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    tiers_->verticalHeader()->setVisible(false);
    tiers_->setMaximumHeight(110);
    tier->addRow(tiers_);
    auto* addTier = new QPushButton(tr("Add tier"), tierBox);
    auto* removeTier = new QPushButton(tr("Remove tier"), tierBox);
    tier->addRow(row(addTier, removeTier, tierBox));
    top->addWidget(tierBox);
    connect(addTier, &QPushButton::clicked, this, [this] {
        const int r = tiers_->rowCount();
        tiers_->insertRow(r);
        tiers_->setItem(r, 0, new QTableWidgetItem(QStringLiteral("tier%1").arg(r + 1)));
        for (int c = 1; c < 4; ++c)
            tiers_->setItem(r, c, new QTableWidgetItem("0"));
    });
    connect(removeTier, &QPushButton::clicked, this, [this] {
        if (tiers_->rowCount() > 0)
            tiers_->removeRow(tiers_->currentRow() >= 0 ? tiers_->currentRow()
                                                        : tiers_->rowCount() - 1);
        commitStep(tiers_);
    });

    // --- File-wide sections.
    auto* fileBox = new QGroupBox(tr("Policy file: store and trusted proxies"), this);
    auto* file = formIn(fileBox);
    storeKind_ = new QComboBox(fileBox);
    addItem(storeKind_, "memory", StoreConfig::Kind::Memory);
    addItem(storeKind_, "redis", StoreConfig::Kind::Redis);
    maxBuckets_ = new QSpinBox(fileBox);
    maxBuckets_->setRange(0, 2'000'000'000);
    maxBuckets_->setGroupSeparatorShown(true);
    file->addRow(tr("Store / max buckets"), row(storeKind_, maxBuckets_, fileBox));
    storeUrls_ = new QLineEdit(fileBox);
    storeUrls_->setPlaceholderText(tr("redis://127.0.0.1:6379/0"));
    file->addRow(tr("Redis URLs"), storeUrls_);
    storeNamespace_ = new QLineEdit(fileBox);
    file->addRow(tr("Key namespace"), storeNamespace_);
    replicas_ = new QSpinBox(fileBox);
    replicas_->setRange(1, kMaxReplicas);
    replicas_->setToolTip(
        tr("Processes sharing the store: on_store_error \"local\" holds "
           "1/replicas of each limit while the store is unreachable"));
    file->addRow(tr("Replicas"), replicas_);
    proxyCidrs_ = new QLineEdit(fileBox);
    proxyCidrs_->setPlaceholderText(tr("none"));
    file->addRow(tr("Trusted proxies"), proxyCidrs_);
    proxyHeader_ = new QComboBox(fileBox);
    proxyHeader_->addItems({"x-forwarded-for", "forwarded", "x-real-ip"});
    file->addRow(tr("Forwarded header"), proxyHeader_);
    top->addWidget(fileBox);

    diagnostics_ = new QLabel(this);
    diagnostics_->setObjectName("policyDiagnostics");
    diagnostics_->setWordWrap(true);
    diagnostics_->setTextFormat(Qt::RichText);
    diagnostics_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    top->addWidget(diagnostics_);
    top->addStretch(1);

    // Sliders and their spin boxes move together; the spin box holds the exact value.
    connect(capacitySlider_, &QSlider::valueChanged, this, [this](int position) {
        if (updating_) return;
        capacity_->setValue(static_cast<int>(std::lround(kCapacityScale.valueAt(position))));
    });
    connect(refillSlider_, &QSlider::valueChanged, this, [this](int position) {
        if (updating_) return;
        const double v = kRefillScale.valueAt(position);
        // Two significant digits: 0.012, 0.85, 4.7, 120, 3300.
        const double magnitude = std::pow(10.0, std::floor(std::log10(v)) - 1);
        refill_->setValue(std::round(v / magnitude) * magnitude);
    });
    connect(capacity_, &QSpinBox::valueChanged, this, [this](int v) {
        QSignalBlocker block(capacitySlider_);
        capacitySlider_->setValue(kCapacityScale.positionOf(v));
    });
    connect(refill_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        QSignalBlocker block(refillSlider_);
        refillSlider_->setValue(kRefillScale.positionOf(v));
    });

    // Every field commits on change; line edits when editing ends (typing stays local). Each
    // commit is an undo step named after its field. A number typed or dragged is one step
    // until it is confirmed or the slider let go; every other change is a step of its own.
    for (QComboBox* box : {algorithm_, keySource_, unverified_, onStoreError_, mode_, headers_})
        connect(box, &QComboBox::currentIndexChanged, this, [this, box] { commitStep(box); });
    for (QSpinBox* box : {capacity_, delay_, cost_, ipv4Prefix_, ipv6Prefix_, budgetPerPeer_,
                          budgetGlobal_, storeTimeoutMs_})
        connect(box, &QSpinBox::valueChanged, this, [this, box] { commitPolicy(box); });
    for (QDoubleSpinBox* box : {refill_, windowMs_, budgetTtlMs_})
        connect(box, &QDoubleSpinBox::valueChanged, this, [this, box] { commitPolicy(box); });
    for (QCheckBox* box : {nodelay_, budgetEnabled_})
        connect(box, &QCheckBox::toggled, this, [this, box] { commitStep(box); });
    for (QLineEdit* edit : {name_, pathPrefix_, pathPattern_, methods_, keyHeader_, keyParts_,
                            bypassCidrs_, bypassPrincipals_, tierAttribute_, tierDefault_,
                            ipv6Budget_, ipv4Budget_})
        connect(edit, &QLineEdit::editingFinished, this, [this, edit] { commitStep(edit); });
    connect(tiers_, &QTableWidget::itemChanged, this, [this] { commitStep(tiers_); });

    connect(storeKind_, &QComboBox::currentIndexChanged, this, [this] {
        commitFileSections(storeKind_);
        document_.finishStep();
    });
    connect(proxyHeader_, &QComboBox::currentIndexChanged, this, [this] {
        commitFileSections(proxyHeader_);
        document_.finishStep();
    });
    for (QSpinBox* box : {maxBuckets_, replicas_})
        connect(box, &QSpinBox::valueChanged, this, [this, box] { commitFileSections(box); });
    for (QLineEdit* edit : {storeUrls_, storeNamespace_, proxyCidrs_}) {
        connect(edit, &QLineEdit::editingFinished, this, [this, edit] {
            commitFileSections(edit);
            document_.finishStep();
        });
    }

    // Where a number's step ends: confirmed (Enter, or the field left), the slider pressed or
    // let go, or moved by a key or a click beside the handle (each such move is one step).
    for (QAbstractSpinBox* box : findChildren<QAbstractSpinBox*>())
        connect(box, &QAbstractSpinBox::editingFinished, &document_, &PolicyDocument::finishStep);
    for (QSlider* slider : {capacitySlider_, refillSlider_}) {
        connect(slider, &QSlider::sliderPressed, &document_, &PolicyDocument::finishStep);
        connect(slider, &QSlider::sliderReleased, &document_, &PolicyDocument::finishStep);
        connect(slider, &QSlider::actionTriggered, this, [this](int action) {
            if (action != QAbstractSlider::SliderMove) document_.finishStep();
        });
    }
}

}  // namespace ratelab::gui
