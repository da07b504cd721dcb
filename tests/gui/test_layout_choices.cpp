// The window's Sharding choices go through RankLayout (strategy/rank_layout.h, one place): for every ranks
// entry and every choice, the strategy the window builds is the layout written out here by hand (T head parts,
// K stages, D replicas and the ZeRO stage) and rank_layout admits it on that many ranks, or the choice is not
// selectable there and, when a configuration brings it anyway, the window shows rank_layout's refusal under
// the combo. The description under the combo is describe_rank_layout's, in Chinese when the interface is.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QStandardItemModel>

#include "base/error.h"
#include "gui/TrainingSetupPanel.h"
#include "gui/AppSettings.h"
#include "session/RunDefaults.h"
#include "strategy/rank_layout.h"

using namespace hrapp;

namespace {

// The layout a choice should give on n ranks, by hand: admitted, and then its dimensions and its English.
struct Expected {
    bool admitted = false;
    int tp_head = 1, pipeline = 1, data = 1;
    std::string shard = "none";
    QString english;
};

Expected expected(const QString& choice, int n) {
    Expected e;
    const QString zero = choice.section(QLatin1Char('-'), -1);
    if (choice == QLatin1String("none")) {
        e.admitted = n == 1;
        e.english = QStringLiteral("one process");
    } else if (!choice.contains(QLatin1Char('-')) && choice != QLatin1String("pipeline")) {  // dp, zero1..3
        e.admitted = true;
        e.data = n;
        e.shard = choice.toStdString();
        e.english = QStringLiteral("%1 data-parallel replicas (%2)").arg(n).arg(choice);
    } else if (choice == QLatin1String("tp-head") || choice == QLatin1String("pipeline")) {  // a part a rank
        e.admitted = true;
        (choice == QLatin1String("tp-head") ? e.tp_head : e.pipeline) = n;
        e.english = choice == QLatin1String("tp-head") ? QStringLiteral("%1 split-head ranks").arg(n)
                                                        : QStringLiteral("%1 pipeline stages").arg(n);
    } else {  // half as many parts, each on 2 replicas (dp or zero1): 4, 6, 8 ... ranks
        e.admitted = n >= 4 && n % 2 == 0;
        const bool head = choice.startsWith(QLatin1String("tp-head"));
        (head ? e.tp_head : e.pipeline) = std::max(2, n / 2);  // (at least 2 parts: fewer ranks are refused)
        e.data = 2;
        e.shard = zero.toStdString();
        e.english = (head ? QStringLiteral("%1 split-head ranks x 2 data-parallel replicas (%2)")
                          : QStringLiteral("%1 pipeline stages x 2 data-parallel replicas (%2)"))
                        .arg(n / 2)
                        .arg(zero);
    }
    return e;
}

}  // namespace

class TestLayoutChoices : public QObject {
    Q_OBJECT
private slots:
    void everyChoiceIsRankLayouts() {
        TrainingSetupPanel panel;
        auto* ranks = panel.findChild<QComboBox*>(QStringLiteral("ranksCombo"));
        auto* sharding = panel.findChild<QComboBox*>(QStringLiteral("shardingCombo"));
        auto* text = panel.findChild<QLabel*>(QStringLiteral("layoutDescription"));
        QVERIFY(ranks && sharding && text);
        auto* items = qobject_cast<QStandardItemModel*>(sharding->model());
        QVERIFY(items);
        QCOMPARE(sharding->count(), int(hr::layout_choices().size()));
        // one process, and CPU ranks up to 4 at least (the replicated layouts need 4): every entry
        QVERIFY(ranks->findData(QStringLiteral("cpu:4")) > 0);
        int checked = 0, refused = 0;
        for (int r = 0; r < ranks->count(); ++r) {
            ranks->setCurrentIndex(r);
            const int n = panel.ranks();
            for (int i = 0; i < sharding->count(); ++i) {
                const QString choice = sharding->itemData(i).toString();
                const Expected e = expected(choice, n);
                hr::TrainConfig c = defaultTrainConfig();
                if (n == 1) {  // one process: the combo is off and says None
                    QVERIFY(!sharding->isEnabled());
                    panel.applyTo(c);
                    QCOMPARE(c.strategy.shard, std::string("none"));
                    QCOMPARE(text->text(), QStringLiteral("one process"));
                    break;
                }
                QCOMPARE(items->item(i)->isEnabled(), e.admitted);
                if (e.admitted) {
                    sharding->setCurrentIndex(i);
                    panel.applyTo(c);
                    QCOMPARE(c.strategy.tp_head, e.tp_head);
                    QCOMPARE(c.strategy.pipeline, e.pipeline);
                    QCOMPARE(c.strategy.shard, e.shard);
                    const hr::RankLayout l = hr::rank_layout(c.strategy, n);  // admitted: no InputError
                    QCOMPARE(l.data, e.data);
                    QCOMPARE(text->text(), e.english);
                    ++checked;
                } else {
                    // a configuration that brings it (a run's, Continue): its refusal, under the combo
                    hr::StrategyConfig s;
                    s.shard = e.shard;
                    s.tp_head = e.tp_head;
                    s.pipeline = e.pipeline;
                    if (choice == QLatin1String("none")) s.shard = "none";
                    panel.setStrategy(s);
                    QCOMPARE(sharding->currentData().toString(), choice);
                    panel.applyTo(c);
                    QString why;
                    try {
                        (void)hr::rank_layout(c.strategy, n);
                    } catch (const hr::InputError& err) {
                        why = QString::fromStdString(err.what());
                    }
                    QVERIFY2(!why.isEmpty(), qPrintable(choice));
                    QCOMPARE(text->text(), why);
                    // the rule that refuses it, by hand: no way to share, no replicas, or ranks T or K does not divide
                    const char* rule = choice == QLatin1String("none") ? "need a way to share the work"
                                       : n % 2 == 0                    ? "does not combine with --shard"
                                                                       : "start it on";
                    QVERIFY2(why.contains(QLatin1String(rule)), qPrintable(why));
                    ++refused;
                    ranks->setCurrentIndex(0);  // (the next choice from a fresh ranks entry)
                    ranks->setCurrentIndex(r);
                }
            }
        }
        qInfo("%d choices admitted and described, %d refused with their reason", checked, refused);
        QVERIFY(checked > 0 && refused > 0);
    }

    // The description in the interface language: zh_CN shows the Chinese of describe_rank_layout's message.
    void describedInChinese() {
        QCOMPARE(installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        {
            TrainingSetupPanel panel;
            auto* ranks = panel.findChild<QComboBox*>(QStringLiteral("ranksCombo"));
            auto* sharding = panel.findChild<QComboBox*>(QStringLiteral("shardingCombo"));
            auto* text = panel.findChild<QLabel*>(QStringLiteral("layoutDescription"));
            QVERIFY(ranks && sharding && text);
            ranks->setCurrentIndex(ranks->findData(QStringLiteral("cpu:4")));
            sharding->setCurrentIndex(sharding->findData(QStringLiteral("pipeline-zero1")));
            qInfo("zh_CN: %s", qPrintable(text->text()));
            QCOMPARE(text->text(), QStringLiteral("2 个流水线阶段 × 2 个数据并行副本（zero1）"));
            sharding->setCurrentIndex(sharding->findData(QStringLiteral("zero2")));
            QCOMPARE(text->text(), QStringLiteral("4 个数据并行副本（zero2）"));
        }
        installTranslators(QStringLiteral("en"));
    }
};

QTEST_MAIN(TestLayoutChoices)
#include "test_layout_choices.moc"
