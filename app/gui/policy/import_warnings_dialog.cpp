#include "gui/policy/import_warnings_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTableWidget>
#include <QVBoxLayout>

namespace ratelab::gui {

namespace {

constexpr qint64 kMaxExcerptBytes = qint64(4) << 20;

QString where(const Diagnostic& d) {
    QString out = QFileInfo(QString::fromStdString(d.file)).fileName();
    if (d.line > 0) out += QStringLiteral(":%1:%2").arg(d.line).arg(d.column);
    return out;
}

}  // namespace

QString sourceExcerpt(const QString& file, int line, int context) {
    QFile f(file);
    if (line <= 0) return QObject::tr("(the warning is about the whole import, not one line)");
    if (!f.open(QIODevice::ReadOnly))
        return QObject::tr("%1 cannot be read: %2")
            .arg(QDir::toNativeSeparators(file), f.errorString());
    const QStringList lines = QString::fromUtf8(f.read(kMaxExcerptBytes)).split('\n');
    if (line > lines.size())
        return QObject::tr("%1 has no line %2 now").arg(QDir::toNativeSeparators(file)).arg(line);
    const int first = std::max(1, line - context);
    const int last = std::min(static_cast<int>(lines.size()), line + context);
    const int width = static_cast<int>(QString::number(last).size());
    QString out;
    for (int n = first; n <= last; ++n) {
        QString text = lines[n - 1];
        if (text.endsWith('\r')) text.chop(1);
        out += QStringLiteral("%1 %2| %3\n")
                   .arg(n == line ? QStringLiteral(">") : QStringLiteral(" "))
                   .arg(n, width)
                   .arg(text);
    }
    return out;
}

ImportWarningsDialog::ImportWarningsDialog(const QString& kind,
                                           const std::vector<Diagnostic>& warnings, QWidget* parent)
    : QDialog(parent), warnings_(warnings) {
    setObjectName("importWarningsDialog");
    setWindowTitle(tr("Imported from %1 with warnings").arg(kind));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("What %1 does that the imported policies do differently, or not at all. Select a "
           "warning to see the lines it is about.")
            .arg(kind),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    table_ = new QTableWidget(static_cast<int>(warnings_.size()), 2, this);
    table_->setObjectName("importWarnings");
    table_->setHorizontalHeaderLabels({tr("Where"), tr("Warning")});
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    for (int row = 0; row < table_->rowCount(); ++row) {
        const Diagnostic& d = warnings_[row];
        auto* at = new QTableWidgetItem(where(d));
        at->setToolTip(QDir::toNativeSeparators(QString::fromStdString(d.file)));
        table_->setItem(row, 0, at);
        table_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(d.message)));
    }
    table_->resizeRowsToContents();
    layout->addWidget(table_, 3);

    source_ = new QPlainTextEdit(this);
    source_->setObjectName("importWarningSource");
    source_->setReadOnly(true);
    source_->setLineWrapMode(QPlainTextEdit::NoWrap);
    source_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    layout->addWidget(source_, 1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);

    connect(table_, &QTableWidget::currentCellChanged, this,
            [this](int row, int, int, int) { showWarning(row); });
    resize(860, 520);
    if (!warnings_.empty()) showWarning(0);
}

void ImportWarningsDialog::showWarning(int row) {
    if (row < 0 || row >= static_cast<int>(warnings_.size())) return;
    if (table_->currentRow() != row) table_->setCurrentCell(row, 0);
    const Diagnostic& d = warnings_[row];
    source_->setPlainText(sourceExcerpt(QString::fromStdString(d.file), d.line));
}

QString ImportWarningsDialog::excerpt() const {
    return source_->toPlainText();
}

}  // namespace ratelab::gui
