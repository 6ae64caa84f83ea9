#pragma once

// The policy file being edited: the user's values, where they came from, whether they were
// saved, and what validation says about them. The editor writes into it; runs, saving and
// export read from it.

#include <QObject>
#include <QString>

#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::gui {

/// GUI thread only.
class PolicyDocument : public QObject {
    Q_OBJECT

public:
    explicit PolicyDocument(QObject* parent = nullptr);

    /// The user's values, limits compiled.
    const PolicySet& policies() const { return set_; }
    /// The values as last loaded or saved (what the file holds; the starting point the edits
    /// are compared with).
    const PolicySet& original() const { return original_; }
    /// The file it was loaded from or saved to; empty for a new set. May be a ":/" resource.
    const QString& path() const { return path_; }
    /// The name shown in titles and diagnostics.
    QString displayName() const;
    bool isModified() const { return modified_; }
    /// Diagnostics of the current values (validatePolicySet): errors and lint warnings.
    const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
    bool hasErrors() const;

    /// Replaces the whole set (a file was loaded or a new set made): not modified.
    void reset(PolicySet set, const QString& path);
    /// The editor changed one policy. Marks the document modified and revalidates.
    /// REQUIRES: index < policies().policies.size().
    void setPolicy(std::size_t index, Policy policy);
    /// The editor changed the file-wide sections.
    void setStore(StoreConfig store);
    void setTrustedProxies(TrustedProxies proxies);
    /// The set was written to `path`.
    void markSaved(const QString& path);

signals:
    /// The whole set was replaced: editors rebuild their forms.
    void reloaded();
    /// One policy was edited (by the editor).
    void policyEdited(std::size_t index);
    void modifiedChanged(bool modified);
    void diagnosticsChanged();

private:
    void edited();
    void revalidate();

    PolicySet set_;
    PolicySet original_;
    QString path_;
    bool modified_ = false;
    std::vector<Diagnostic> diagnostics_;
};

}  // namespace ratelab::gui
