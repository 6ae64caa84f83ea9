#pragma once

// Saving a chart from its context menu: "Save chart as PNG..." renders the plot widget as it
// is shown (QWidget::grab); "Save series as CSV..." writes the chart's series at full
// resolution, as RunSeries holds them (not the decimated lines), with numbers in the C locale
// (ratelab/number_text.h) whatever the user's locale. File names come through UserInteraction;
// encoding and writing run on a pool thread, so a long replay's table never stalls the GUI.

#include <QObject>
#include <QString>

#include <string>
#include <vector>

#include "gui/session/run_series.h"

namespace ratelab::gui {

class ChartsPanel;
class UserInteraction;

/// One chart's series, copied out of RunSeries so a pool thread can write them.
struct ChartTable {
    std::vector<std::string> names;            ///< the series' legend names, in spec order
    std::vector<double> xs;                    ///< sample times, seconds of virtual time
    std::vector<std::vector<double>> columns;  ///< per name, one value per sample time
};

/// The series of `series` drawn on `chart`, every sample kept. GUI thread (RunSeries is).
ChartTable chartTable(const RunSeries& series, ChartKind chart);

/// "t_s,<name>,<name>,...\n" then one row per sample time. The names need no quoting: they are
/// fixed words and the scenario's class names, which hold no comma, quote, dot or space (the
/// scenario loader refuses them). Thread-safe.
std::string chartCsv(const ChartTable& table);

/// Gives each of `charts`' plots the two context-menu entries and carries them out. `charts`,
/// `series` and `ui` must outlive it. GUI thread only.
class ChartExport : public QObject {
    Q_OBJECT

public:
    ChartExport(ChartsPanel& charts, const RunSeries& series, UserInteraction& ui,
                QObject* parent = nullptr);

    /// Asks for a file, then writes the chart `kind` as shown now, as PNG. saved() follows
    /// unless the user cancelled.
    void savePng(ChartKind kind);
    /// Asks for a file, then writes the series of chart `kind` as CSV. saved() follows unless
    /// the user cancelled.
    void saveCsv(ChartKind kind);

signals:
    /// A file was written (ok) or could not be (the error was shown).
    void saved(const QString& path, bool ok);
    void statusMessage(const QString& text);

private:
    QString askForFile(const QString& title, ChartKind kind, const QString& suffix,
                       const QString& filter);
    /// Runs `write` (returns an error, empty when written) on a pool thread, then reports.
    template <class Write>
    void writeInBackground(const QString& path, Write write);

    ChartsPanel& charts_;
    const RunSeries& series_;
    UserInteraction& ui_;
    QString lastFolder_;  // where the previous chart went: the next is proposed there too
};

}  // namespace ratelab::gui
