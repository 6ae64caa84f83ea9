#include "gui/plot/chart_export.h"

#include <QAction>
#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QImage>
#include <QPixmap>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/plot/charts_panel.h"
#include "gui/window/file_write.h"
#include "gui/plot/time_plot.h"
#include "ratelab/number_text.h"
#include "gui/window/user_interaction.h"

namespace ratelab::gui {

namespace {

// The file name proposed for a chart, before its suffix.
QString fileStem(ChartKind kind) {
    switch (kind) {
        case ChartKind::Traffic:
            return QStringLiteral("traffic");
        case ChartKind::Keyspace:
            return QStringLiteral("keyspace");
        case ChartKind::StoreErrors:
            return QStringLiteral("store-errors");
        case ChartKind::Latency:
            return QStringLiteral("latency");
    }
    return QStringLiteral("chart");
}

}  // namespace

ChartTable chartTable(const RunSeries& series, ChartKind chart) {
    ChartTable table;
    const auto xs = series.xs();
    table.xs.assign(xs.begin(), xs.end());
    for (std::size_t i = 0; i < series.specs().size(); ++i) {
        if (series.specs()[i].chart != chart) continue;
        table.names.push_back(series.specs()[i].name.toStdString());
        const auto ys = series.ys(i);
        table.columns.emplace_back(ys.begin(), ys.end());
    }
    return table;
}

std::string chartCsv(const ChartTable& table) {
    std::string out = "t_s";
    for (const std::string& name : table.names)
        out += "," + name;
    out += "\n";
    for (std::size_t k = 0; k < table.xs.size(); ++k) {
        out += numberText(table.xs[k]);
        for (const std::vector<double>& column : table.columns) {
            out += ',';
            out += numberText(column[k]);
        }
        out += '\n';
    }
    return out;
}

ChartExport::ChartExport(ChartsPanel& charts, const RunSeries& series, UserInteraction& ui,
                         QObject* parent)
    : QObject(parent), charts_(charts), series_(series), ui_(ui) {
    for (ChartKind kind : kChartKinds) {
        TimePlot* plot = charts_.plot(kind);
        auto* png = new QAction(tr("Save chart as PNG..."), plot);
        png->setObjectName("saveChartPngAction");
        connect(png, &QAction::triggered, this, [this, kind] { savePng(kind); });
        auto* csv = new QAction(tr("Save series as CSV..."), plot);
        csv->setObjectName("saveSeriesCsvAction");
        connect(csv, &QAction::triggered, this, [this, kind] { saveCsv(kind); });
        plot->addAction(png);
        plot->addAction(csv);
        plot->setContextMenuPolicy(Qt::ActionsContextMenu);
    }
}

QString ChartExport::askForFile(const QString& title, ChartKind kind, const QString& suffix,
                                const QString& filter) {
    const QDir folder = lastFolder_.isEmpty() ? QDir::current() : QDir(lastFolder_);
    const QString path =
        ui_.chooseSaveFile(title, folder.filePath(fileStem(kind) + suffix), filter);
    if (!path.isEmpty()) lastFolder_ = QFileInfo(path).absolutePath();
    return path;
}

template <class Write>
void ChartExport::writeInBackground(const QString& path, Write write) {
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, path] {
        const QString error = watcher->result();
        watcher->deleteLater();
        if (!error.isEmpty()) {
            ui_.showError(tr("Cannot save the chart"), error);
            emit statusMessage(tr("Not saved: %1").arg(error));
            emit saved(path, false);
            return;
        }
        emit statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
        emit saved(path, true);
    });
    watcher->setFuture(QtConcurrent::run(std::move(write)));
}

void ChartExport::savePng(ChartKind kind) {
    const QString path =
        askForFile(tr("Save chart as PNG"), kind, QStringLiteral(".png"), tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    // The widget is grabbed here, on the GUI thread; the image is encoded off it.
    QImage image = charts_.plot(kind)->grab().toImage();
    writeInBackground(path, [path, image = std::move(image)] {
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        if (!image.save(&buffer, "PNG")) {
            return QObject::tr("%1: the image could not be encoded as PNG")
                .arg(QDir::toNativeSeparators(path));
        }
        QString error;
        writeWholeFile(path, bytes, error);
        return error;
    });
}

void ChartExport::saveCsv(ChartKind kind) {
    const QString path =
        askForFile(tr("Save series as CSV"), kind, QStringLiteral(".csv"), tr("CSV files (*.csv)"));
    if (path.isEmpty()) return;
    writeInBackground(path, [path, table = chartTable(series_, kind)] {
        const std::string text = chartCsv(table);
        QString error;
        writeWholeFile(path, QByteArrayView(text.data(), static_cast<qsizetype>(text.size())),
                       error);
        return error;
    });
}

}  // namespace ratelab::gui
