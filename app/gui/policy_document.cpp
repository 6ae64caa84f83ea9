#include "policy_document.h"

#include <QFileInfo>

#include "ratelab/policy_file.h"

namespace ratelab::gui {

PolicyDocument::PolicyDocument(QObject* parent) : QObject(parent) {}

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
    revalidate();
    const bool wasModified = modified_;
    modified_ = false;
    emit reloaded();
    if (wasModified) emit modifiedChanged(false);
}

void PolicyDocument::setPolicy(std::size_t index, Policy policy) {
    if (index >= set_.policies.size() || set_.policies[index] == policy) return;
    set_.policies[index] = std::move(policy);
    edited();
    emit policyEdited(index);
}

void PolicyDocument::setStore(StoreConfig store) {
    if (set_.store == store) return;
    set_.store = std::move(store);
    edited();
}

void PolicyDocument::setTrustedProxies(TrustedProxies proxies) {
    if (set_.trustedProxies == proxies) return;
    set_.trustedProxies = std::move(proxies);
    edited();
}

void PolicyDocument::markSaved(const QString& path) {
    path_ = path;
    original_ = set_;
    if (modified_) {
        modified_ = false;
        emit modifiedChanged(false);
    }
}

void PolicyDocument::edited() {
    // Results embedded by an earlier export describe other numbers: an edit drops them.
    set_.validation.reset();
    revalidate();
    if (!modified_) {
        modified_ = true;
        emit modifiedChanged(true);
    }
}

void PolicyDocument::revalidate() {
    diagnostics_ = validatePolicySet(set_, displayName().toStdString());
    emit diagnosticsChanged();
}

}  // namespace ratelab::gui
