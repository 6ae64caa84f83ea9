// decimateMinMax (app/gui/plot/decimate.cpp): at most two points per pixel column, spikes kept.

#include <QtTest>

#include <cmath>
#include <limits>
#include <vector>

#include "gui/plot/decimate.h"

using ratelab::gui::decimateMinMax;

class TestDecimate : public QObject {
    Q_OBJECT

private slots:
    void bounds_data();
    void bounds();
    void keepsASpikeInEveryColumn();
    void dropsNonFinitePoints();
    void rangeSelectsPoints();
};

void TestDecimate::bounds_data() {
    QTest::addColumn<int>("points");
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("expectedAtMost");
    QTest::addColumn<bool>("unchanged");
    QTest::newRow("fewer than 2 per column") << 150 << 100 << 150 << true;
    QTest::newRow("exactly 2 per column") << 200 << 100 << 200 << true;
    QTest::newRow("100k into 800 columns") << 100'000 << 800 << 1600 << false;
    QTest::newRow("1M into 1 column") << 1'000'000 << 1 << 2 << false;
}

void TestDecimate::bounds() {
    QFETCH(int, points);
    QFETCH(int, columns);
    QFETCH(int, expectedAtMost);
    QFETCH(bool, unchanged);
    std::vector<double> xs(static_cast<std::size_t>(points));
    std::vector<double> ys(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        xs[i] = static_cast<double>(i);
        ys[i] = std::sin(static_cast<double>(i) * 0.01) * 100;
    }
    const QList<QPointF> out = decimateMinMax(xs, ys, 0, points - 1, columns);
    QVERIFY(out.size() <= expectedAtMost);
    QVERIFY(out.size() >= std::min(points, columns));
    if (unchanged) QCOMPARE(out.size(), qsizetype(points));
    for (qsizetype i = 1; i < out.size(); ++i)
        QVERIFY(out[i].x() > out[i - 1].x());  // x order preserved, no duplicates
}

// A one-sample attack spike of 5000 among 100 000 samples of 10 survives decimation to 200
// columns, and so does a one-sample dip to 0.
void TestDecimate::keepsASpikeInEveryColumn() {
    std::vector<double> xs(100'000);
    std::vector<double> ys(xs.size(), 10.0);
    for (std::size_t i = 0; i < xs.size(); ++i)
        xs[i] = static_cast<double>(i) * 0.1;
    ys[54'321] = 5000;
    ys[77'777] = 0;
    const QList<QPointF> out = decimateMinMax(xs, ys, 0, xs.back(), 200);
    QVERIFY(out.size() <= 400);
    double maxY = 0;
    double minY = 1e9;
    double xOfMax = -1;
    for (const QPointF& p : out) {
        if (p.y() > maxY) {
            maxY = p.y();
            xOfMax = p.x();
        }
        minY = std::min(minY, p.y());
    }
    QCOMPARE(maxY, 5000.0);
    QCOMPARE(xOfMax, xs[54'321]);
    QCOMPARE(minY, 0.0);
}

void TestDecimate::dropsNonFinitePoints() {
    const std::vector<double> xs = {0, 1, 2, 3, 4};
    const std::vector<double> ys = {1, std::numeric_limits<double>::quiet_NaN(), 3,
                                    std::numeric_limits<double>::infinity(), 5};
    const QList<QPointF> few = decimateMinMax(xs, ys, 0, 4, 100);
    QCOMPARE(few.size(), qsizetype(3));
    const QList<QPointF> squeezed = decimateMinMax(xs, ys, 0, 4, 1);
    QCOMPARE(squeezed.size(), qsizetype(2));
    QCOMPARE(squeezed[0], QPointF(0, 1));
    QCOMPARE(squeezed[1], QPointF(4, 5));
}

void TestDecimate::rangeSelectsPoints() {
    const std::vector<double> xs = {0, 1, 2, 3, 4, 5};
    const std::vector<double> ys = {0, 10, 20, 30, 40, 50};
    const QList<QPointF> out = decimateMinMax(xs, ys, 1.5, 4, 100);
    QCOMPARE(out.size(), qsizetype(3));
    QCOMPARE(out.front(), QPointF(2, 20));
    QCOMPARE(out.back(), QPointF(4, 40));
    QVERIFY(decimateMinMax(xs, ys, 6, 9, 100).isEmpty());
}

QTEST_MAIN(TestDecimate)
#include "tst_decimate.moc"
