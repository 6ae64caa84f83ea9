#pragma once

// The policy editor: a form for every field of the selected policy and for the file-wide
// sections, with logarithmic sliders for capacity and refill. Every change goes straight into
// the PolicyDocument, one undo step per field (a slider drag is one step); the workbench sends
// live-tunable changes on to the running engine.

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSlider;
class QSpinBox;
class QTableWidget;

namespace ratelab::gui {

class PolicyDocument;

/// GUI thread only. Holds no state of its own beyond what the widgets show.
class PolicyEditor : public QWidget {
    Q_OBJECT

public:
    explicit PolicyEditor(PolicyDocument& document, QWidget* parent = nullptr);

    /// The policy the form shows.
    int currentPolicy() const;

    QSlider* capacitySlider() const { return capacitySlider_; }
    QSlider* refillSlider() const { return refillSlider_; }

private:
    void buildForm();
    /// Fills every field from the document (signals blocked).
    void showDocument();
    void showPolicy();
    void showFileSections();
    /// Reads the form into the document; `field` (the one that changed) names the undo step.
    void commitPolicy(QWidget* field);
    /// commitPolicy, and the step ends with it.
    void commitStep(QWidget* field);
    void commitFileSections(QWidget* field);
    /// "capacity change": the undo step's name for an edit of `field`, from the form's label.
    QString changeName(QWidget* field) const;
    void showDiagnostics();
    void updateEnabledFields();
    /// Marks a text field good or bad; returns `ok`.
    bool markField(QLineEdit* field, bool ok, const QString& error);

    PolicyDocument& document_;
    bool updating_ = false;

    QComboBox* policyPicker_ = nullptr;
    QLineEdit* name_ = nullptr;
    QLineEdit* pathPrefix_ = nullptr;
    QLineEdit* pathPattern_ = nullptr;
    QLineEdit* methods_ = nullptr;
    QComboBox* algorithm_ = nullptr;
    QSpinBox* capacity_ = nullptr;
    QSlider* capacitySlider_ = nullptr;
    QDoubleSpinBox* refill_ = nullptr;
    QSlider* refillSlider_ = nullptr;
    QDoubleSpinBox* windowMs_ = nullptr;
    QSpinBox* delay_ = nullptr;
    QCheckBox* nodelay_ = nullptr;
    QSpinBox* cost_ = nullptr;
    QComboBox* keySource_ = nullptr;
    QLineEdit* keyHeader_ = nullptr;
    QLineEdit* keyParts_ = nullptr;
    QSpinBox* ipv4Prefix_ = nullptr;
    QSpinBox* ipv6Prefix_ = nullptr;
    QComboBox* unverified_ = nullptr;
    QCheckBox* budgetEnabled_ = nullptr;
    QSpinBox* budgetPerPeer_ = nullptr;
    QSpinBox* budgetGlobal_ = nullptr;
    QDoubleSpinBox* budgetTtlMs_ = nullptr;
    QComboBox* onStoreError_ = nullptr;
    QSpinBox* storeTimeoutMs_ = nullptr;
    QComboBox* mode_ = nullptr;
    QComboBox* headers_ = nullptr;
    QLineEdit* bypassCidrs_ = nullptr;
    QLineEdit* ipv6Budget_ = nullptr;  ///< the address budget's IPv6 levels
    QLineEdit* ipv4Budget_ = nullptr;
    QLineEdit* bypassPrincipals_ = nullptr;
    QLineEdit* tierAttribute_ = nullptr;
    QLineEdit* tierDefault_ = nullptr;
    QTableWidget* tiers_ = nullptr;
    QComboBox* storeKind_ = nullptr;
    QSpinBox* maxBuckets_ = nullptr;
    QSpinBox* replicas_ = nullptr;
    QLineEdit* storeUrls_ = nullptr;
    QLineEdit* storeNamespace_ = nullptr;
    QLineEdit* proxyCidrs_ = nullptr;
    QComboBox* proxyHeader_ = nullptr;
    QLabel* diagnostics_ = nullptr;
};

}  // namespace ratelab::gui
