#include "gui/window/run_controls.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStyle>

#include <cmath>

#include "gui/window/locale_text.h"
#include "gui/session/workbench.h"

namespace ratelab::gui {

const QList<double>& RunControls::speeds() {
    static const QList<double> kSpeeds = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 0};
    return kSpeeds;
}

RunControls::RunControls(Workbench& workbench, QWidget* parent)
    : QWidget(parent), workbench_(workbench) {
    run_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Run"), this);
    run_->setObjectName("runButton");
    run_->setDefault(true);
    QFont bold = run_->font();
    bold.setBold(true);
    run_->setFont(bold);
    run_->setMinimumWidth(90);
    pause_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPause), tr("Pause"), this);
    pause_->setObjectName("pauseButton");
    step_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaSkipForward), tr("Step"), this);
    step_->setObjectName("stepButton");
    step_->setToolTip(tr("Advance one sample interval of virtual time"));
    reset_ = new QPushButton(style()->standardIcon(QStyle::SP_BrowserReload), tr("Reset"), this);
    reset_->setObjectName("resetButton");
    reset_->setToolTip(tr("Start over with the edited policies and the chosen store"));

    speed_ = new QComboBox(this);
    speed_->setObjectName("speedBox");
    for (double s : speeds())
        speed_->addItem(s > 0 ? QStringLiteral("%1x").arg(s) : tr("as fast as possible"), s);
    store_ = new QComboBox(this);
    store_->setObjectName("storeBox");
    store_->addItem(tr("memory store"), static_cast<int>(StoreChoice::Kind::Memory));
    store_->addItem(tr("Redis"), static_cast<int>(StoreChoice::Kind::Redis));
    redisUrl_ = new QLineEdit(QString::fromStdString(StoreChoice{}.redisUrl), this);
    redisUrl_->setObjectName("redisUrl");
    redisUrl_->setMinimumWidth(150);
    redisUrl_->setToolTip(tr("Redis in caller-time mode: it runs on the virtual clock"));
    redisUrl_->setEnabled(false);
    progress_ = new QLabel(this);
    progress_->setObjectName("progressLabel");
    progress_->setMinimumWidth(260);
    progress_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    for (QWidget* w : {static_cast<QWidget*>(run_), static_cast<QWidget*>(pause_),
                       static_cast<QWidget*>(step_), static_cast<QWidget*>(reset_)})
        layout->addWidget(w);
    layout->addSpacing(12);
    layout->addWidget(new QLabel(tr("Speed"), this));
    layout->addWidget(speed_);
    layout->addSpacing(12);
    layout->addWidget(new QLabel(tr("Store"), this));
    layout->addWidget(store_);
    layout->addWidget(redisUrl_);
    layout->addStretch(1);
    layout->addWidget(progress_);

    connect(run_, &QPushButton::clicked, &workbench_, &Workbench::run);
    connect(pause_, &QPushButton::clicked, &workbench_, &Workbench::pause);
    connect(step_, &QPushButton::clicked, &workbench_, &Workbench::step);
    connect(reset_, &QPushButton::clicked, &workbench_, &Workbench::reset);
    connect(speed_, &QComboBox::currentIndexChanged, this,
            [this] { workbench_.setSpeed(speed_->currentData().toDouble()); });
    connect(store_, &QComboBox::currentIndexChanged, this, [this] {
        redisUrl_->setEnabled(store_->currentData().toInt() ==
                              static_cast<int>(StoreChoice::Kind::Redis));
        applyStore();
    });
    connect(redisUrl_, &QLineEdit::editingFinished, this, &RunControls::applyStore);

    SimulationSession& session = workbench_.session();
    connect(&session, &SimulationSession::stateChanged, this, &RunControls::showState);
    connect(&session, &SimulationSession::frame, this, &RunControls::showProgress);
    showState();
    showProgress();
}

void RunControls::selectSpeed(double multiple) {
    int best = speeds().size() - 1;
    if (multiple > 0) {
        double bestDistance = 1e300;
        for (int i = 0; i < speeds().size(); ++i) {
            if (speeds()[i] <= 0) continue;
            const double d = std::abs(std::log(speeds()[i] / multiple));
            if (d < bestDistance) {
                bestDistance = d;
                best = i;
            }
        }
    }
    if (speed_->currentIndex() == best) {
        workbench_.setSpeed(speeds()[best]);
    } else {
        speed_->setCurrentIndex(best);
    }
}

void RunControls::applyStore() {
    StoreChoice choice;
    choice.kind = static_cast<StoreChoice::Kind>(store_->currentData().toInt());
    choice.redisUrl = redisUrl_->text().trimmed().toStdString();
    workbench_.setStoreChoice(choice);
}

void RunControls::showState() {
    const RunState s = workbench_.session().state();
    run_->setEnabled(s != RunState::Running);
    run_->setText(s == RunState::Paused ? tr("Resume") : tr("Run"));
    pause_->setEnabled(s == RunState::Running);
    step_->setEnabled(s != RunState::Finished);
    showProgress();
}

void RunControls::showProgress() {
    const SimulationSession& session = workbench_.session();
    const RunShape& shape = session.shape();
    const double now = static_cast<double>(session.now()) / 1e9;
    const double total = static_cast<double>(shape.duration) / 1e9;
    const double wall = session.wallSeconds();
    const double rate = wall > 0 ? static_cast<double>(session.requests()) / wall : 0;
    QString state;
    switch (session.state()) {
        case RunState::Empty:
            state = tr("no run");
            break;
        case RunState::Ready:
            state = tr("ready");
            break;
        case RunState::Running:
            state = tr("running");
            break;
        case RunState::Paused:
            state = tr("paused");
            break;
        case RunState::Finished:
            state = tr("finished");
            break;
        case RunState::Failed:
            state = tr("failed");
            break;
    }
    progress_->setText(tr("%1   t = %2 / %3 s   %4 requests   %5 decisions/s ")
                           .arg(state)
                           .arg(localeFixed(now, 1))
                           .arg(localeFixed(total, 0))
                           .arg(localeCount(session.requests()))
                           .arg(localeFixed(rate, 0)));
}

}  // namespace ratelab::gui
