#pragma once

// Help > About ratelab (the version, and where the documentation is) and Help > Documentation
// (the docs/ folder in the desktop's file manager), both through UserInteraction.

#include <QString>

class QMenu;
class QMenuBar;

namespace ratelab::gui {

class UserInteraction;

/// The README and the docs/ folder of the tree the workbench runs from (resource_locator.h's
/// data roots: the source tree, an installed tree); empty when there is none.
QString readmeFile();
QString docsFolder();

/// The About text: name, version (QCoreApplication::applicationVersion), the Qt it runs on,
/// and where the README and docs/ are, or that they were not found.
QString aboutText();

/// Adds the Help menu to `bar`; its answers and the docs folder go through `ui`.
QMenu* addHelpMenu(QMenuBar& bar, UserInteraction& ui);

}  // namespace ratelab::gui
