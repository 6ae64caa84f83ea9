#pragma once

// The run bar: run, pause, step, reset, speed, store choice, and where the run is.

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace ratelab::gui {

class Workbench;

class RunControls : public QWidget {
    Q_OBJECT

public:
    /// The speed list: multiples of real time, then 0 for "as fast as possible".
    static const QList<double>& speeds();

    explicit RunControls(Workbench& workbench, QWidget* parent = nullptr);

    /// Selects the speed closest to `multiple` (<= 0: as fast as possible) and applies it.
    void selectSpeed(double multiple);

private:
    void showState();
    void showProgress();
    void applyStore();

    Workbench& workbench_;
    QPushButton* run_ = nullptr;
    QPushButton* pause_ = nullptr;
    QPushButton* step_ = nullptr;
    QPushButton* reset_ = nullptr;
    QComboBox* speed_ = nullptr;
    QComboBox* store_ = nullptr;
    QLineEdit* redisUrl_ = nullptr;
    QLabel* progress_ = nullptr;
};

}  // namespace ratelab::gui
