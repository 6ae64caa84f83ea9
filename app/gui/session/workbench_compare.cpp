// The Workbench's compare mode: which reference A runs beside the editor's policies (B), and
// when the run is rebuilt for it. What the two lanes decide and how they differ is the
// simulator's (sim/decide/comparison.h); this file only chooses A.

#include "gui/session/workbench.h"

namespace ratelab::gui {

bool Workbench::compareWithLoaded() {
    if (document_.original().policies.empty()) {
        ui_.showError(tr("Nothing to compare with"),
                      tr("Open a policy file first: its values as loaded become A."));
        return false;
    }
    reference_ = Reference{document_.original(), tr("%1 as loaded").arg(document_.displayName())};
    emit statusMessage(tr("Comparing the editor (B) with %1 (A).").arg(reference_->label));
    emit compareChanged(true);
    restartForCompare();
    return true;
}

bool Workbench::compareAgainst(const QString& path) {
    if (!settleUnsavedEdits()) return false;
    // Settled, the document holds what its file holds (saved, or the edits discarded).
    PolicySet a = document_.original();
    const QString label = document_.displayName();
    if (a.policies.empty()) {
        ui_.showError(tr("Nothing to compare with"),
                      tr("Open the policy to compare against first: it becomes A."));
        return false;
    }
    // Unsaved edits were settled above, so loading cannot ask again.
    if (!loadPolicyFrom(path, true)) return false;
    reference_ = Reference{std::move(a), label};
    emit statusMessage(
        tr("Comparing %1 (B, in the editor) with %2 (A).").arg(document_.displayName(), label));
    emit compareChanged(true);
    restartForCompare();
    return true;
}

void Workbench::leaveCompare() {
    if (!reference_) return;
    reference_.reset();
    emit compareChanged(false);
    restartForCompare();
}

void Workbench::restartForCompare() {
    runBuilt_ = false;
    if (!scenario_) return;
    const bool playing = session_.state() == RunState::Running;
    if (reset() && playing) session_.play();
}

}  // namespace ratelab::gui
