#include "gui/policy/policy_document.h"

#include <QFileInfo>
#include <QUndoCommand>

#include "ratelab/policy_file.h"

namespace ratelab::gui {

/// One undo step: the whole set before and after it. Sets are small (a few policies), and a
/// snapshot restores everything an edit touched, including the validation record it dropped.
class PolicyDocument::Edit final : public QUndoCommand {
public:
    /// `change` empty: a step of its own, named "policy change", that never merges.
    Edit(PolicyDocument& document, PolicySet before, PolicySet after, std::size_t policy,
         const QString& change)
        : QUndoCommand(change.isEmpty() ? PolicyDocument::tr("policy change") : change)
        , document_(document)
        , before_(std::move(before))
        , after_(std::move(after))
        , policy_(policy)
        , step_(document.step_)
        , mergeable_(!change.isEmpty()) {}

    int id() const override { return 1; }  // every Edit; mergeWith decides

    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = static_cast<const Edit*>(other);
        if (!mergeable_ || !next->mergeable_ || next->step_ != step_ || next->policy_ != policy_ ||
            next->text() != text())
            return false;
        after_ = next->after_;
        // A drag that ends where it began leaves no step behind.
        setObsolete(after_ == before_);
        return true;
    }

    void undo() override {
        document_.finishStep();
        document_.apply(before_);
        emit document_.stepReplayed(policy_);
    }

    void redo() override {
        // push() applies the step the first time; a redo afterwards is a step of its own.
        const bool replayed = pushed_;
        if (replayed) document_.finishStep();
        pushed_ = true;
        document_.apply(after_);
        if (replayed) emit document_.stepReplayed(policy_);
    }

private:
    PolicyDocument& document_;
    PolicySet before_;
    PolicySet after_;
    std::size_t policy_;
    std::uint64_t step_;
    bool mergeable_;
    bool pushed_ = false;
};

PolicyDocument::PolicyDocument(QObject* parent) : QObject(parent) {
    connect(&undo_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
}

QString PolicyDocument::displayName() const {
    return path_.isEmpty() ? tr("untitled policy") : QFileInfo(path_).fileName();
}

bool PolicyDocument::hasErrors() const {
    return ratelab::hasErrors(diagnostics_);
}

void PolicyDocument::reset(PolicySet set, const QString& path) {
    set_ = std::move(set);
    original_ = set_;
    path_ = path;
    finishStep();
    revalidate();
    undo_.clear();
    undo_.setClean();  // also when the saved state had been undone away
    emit reloaded();
}

void PolicyDocument::setPolicy(std::size_t index, Policy policy, const QString& change) {
    if (index >= set_.policies.size() || set_.policies[index] == policy) return;
    PolicySet after = set_;
    after.policies[index] = std::move(policy);
    push(std::move(after), index, change);
}

void PolicyDocument::setPolicies(std::vector<Policy> policies, const QString& change) {
    if (policies.size() != set_.policies.size() || policies == set_.policies) return;
    PolicySet after = set_;
    after.policies = std::move(policies);
    push(std::move(after), kAllPolicies, change);
}

void PolicyDocument::setStore(StoreConfig store, const QString& change) {
    if (set_.store == store) return;
    PolicySet after = set_;
    after.store = std::move(store);
    push(std::move(after), kAllPolicies, change);
}

void PolicyDocument::setTrustedProxies(TrustedProxies proxies, const QString& change) {
    if (set_.trustedProxies == proxies) return;
    PolicySet after = set_;
    after.trustedProxies = std::move(proxies);
    push(std::move(after), kAllPolicies, change);
}

void PolicyDocument::finishStep() {
    ++step_;
}

void PolicyDocument::markSaved(const QString& path) {
    path_ = path;
    original_ = set_;
    finishStep();
    undo_.setClean();
}

void PolicyDocument::push(PolicySet after, std::size_t policy, const QString& change) {
    // Results embedded by an earlier export describe other numbers: an edit drops them.
    after.validation.reset();
    undo_.push(new Edit(*this, set_, std::move(after), policy, change));
}

void PolicyDocument::apply(const PolicySet& values) {
    // Every step keeps the policies and their order (setPolicy, setPolicies), so index i is
    // the same policy on both sides.
    std::vector<std::size_t> changed;
    for (std::size_t i = 0; i < values.policies.size(); ++i) {
        if (i >= set_.policies.size() || !(set_.policies[i] == values.policies[i]))
            changed.push_back(i);
    }
    const bool fileSections =
        !(set_.store == values.store) || !(set_.trustedProxies == values.trustedProxies);
    set_ = values;
    revalidate();
    for (std::size_t i : changed)
        emit policyEdited(i);
    if (fileSections) emit fileSectionsEdited();
}

void PolicyDocument::revalidate() {
    diagnostics_ = validatePolicySet(set_, displayName().toStdString());
    emit diagnosticsChanged();
}

}  // namespace ratelab::gui
