#pragma once

// The policy file being edited: the user's values, where they came from, whether they were
// saved, and what validation says about them. The editor writes into it; runs, saving and
// export read from it. Every edit is a step on its undo stack, so Edit > Undo takes any change
// back, whoever made it (the editor, a trade-off map cell, Suggest).

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <cstdint>
#include <vector>

#include "ratelab/diagnostic.h"
#include "ratelab/policy.h"

namespace ratelab::gui {

/// GUI thread only.
class PolicyDocument : public QObject {
    Q_OBJECT

public:
    /// A step's policy when it changes several, or the file-wide sections.
    static constexpr std::size_t kAllPolicies = static_cast<std::size_t>(-1);

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
    /// Whether the values differ from the saved ones by an edit: follows the undo stack, so
    /// undoing back to where the file was loaded or saved makes it unmodified again.
    bool isModified() const { return !undo_.isClean(); }
    /// Diagnostics of the current values (validatePolicySet): errors and lint warnings.
    const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
    bool hasErrors() const;

    /// The edits, for Edit > Undo and Redo (QUndoStack::createUndoAction names the step).
    QUndoStack& undoStack() { return undo_; }

    /// Replaces the whole set (a file was loaded or a new set made): not modified, nothing to
    /// undo.
    void reset(PolicySet set, const QString& path);
    /// The editor changed one policy; `change` names the step ("capacity change"). Consecutive
    /// changes with the same name to the same policy are one undo step until finishStep(), so
    /// undoing a slider drag restores the number before the drag. Revalidates.
    /// REQUIRES: index < policies().policies.size().
    void setPolicy(std::size_t index, Policy policy, const QString& change = {});
    /// Every policy at once, in one undo step (a trade-off map cell, Suggest).
    /// REQUIRES: policies.size() == policies().policies.size().
    void setPolicies(std::vector<Policy> policies, const QString& change);
    /// The editor changed the file-wide sections.
    void setStore(StoreConfig store, const QString& change = {});
    void setTrustedProxies(TrustedProxies proxies, const QString& change = {});
    /// Ends the current undo step: the next change starts a new one, even to the same field
    /// (a slider was released, a typed number confirmed).
    void finishStep();
    /// The set was written to `path`: the undo stack's clean state.
    void markSaved(const QString& path);

signals:
    /// The whole set was replaced: editors rebuild their forms.
    void reloaded();
    /// One policy changed: an edit, or an undo or redo of one.
    void policyEdited(std::size_t index);
    /// The store or the trusted proxies changed: an edit, or an undo or redo of one.
    void fileSectionsEdited();
    /// An undo or redo was applied (after its policyEdited and fileSectionsEdited): `policy`
    /// is the one policy it changed, or kAllPolicies for a step over several or over the
    /// file-wide sections.
    void stepReplayed(std::size_t policy);
    void modifiedChanged(bool modified);
    void diagnosticsChanged();

private:
    class Edit;

    /// Pushes the step from the current values to `after`; `policy` is the policy it changes
    /// (kAllPolicies: several, or the file-wide sections), which with `change` decides merging
    /// (an empty `change` never merges).
    void push(PolicySet after, std::size_t policy, const QString& change);
    /// Makes `values` the current set and tells the views what changed.
    void apply(const PolicySet& values);
    void revalidate();

    PolicySet set_;
    PolicySet original_;
    QString path_;
    std::vector<Diagnostic> diagnostics_;
    QUndoStack undo_;
    std::uint64_t step_ = 0;  // edits made under one value merge (see finishStep)
};

}  // namespace ratelab::gui
