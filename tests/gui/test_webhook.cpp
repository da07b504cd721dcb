// WebhookNotifier against a local HTTP server on 127.0.0.1: delivery with each template's JSON, the
// per-epoch switch, HTTP errors, and the time-out when the server never answers.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>

#include "http_sink.h"
#include "gui/DesktopNotifier.h"
#include "notify/webhook_notifier.h"

using namespace hrapp;
using hrtest::HttpSink;


class TestWebhook : public QObject {
    Q_OBJECT
private slots:
    void templatesByName() {
        QCOMPARE(WebhookNotifier::templateNames().size(), 5);
        for (const QString& n : WebhookNotifier::templateNames())
            QCOMPARE(WebhookNotifier::templateName(*WebhookNotifier::templateFromName(n)), n);
        QVERIFY(!WebhookNotifier::templateFromName("teams").has_value());
    }

    void deliversEachTemplate_data() {
        QTest::addColumn<QString>("name");
        for (const QString& n : WebhookNotifier::templateNames()) QTest::newRow(qPrintable(n)) << n;
    }

    void deliversEachTemplate() {
        QFETCH(QString, name);
        HttpSink sink;
        WebhookNotifier n;
        WebhookNotifier::Settings s;
        s.url = sink.url();
        s.format = *WebhookNotifier::templateFromName(name);
        n.setSettings(s);
        QSignalSpy delivered(&n, &WebhookNotifier::delivered);
        QSignalSpy failed(&n, &WebhookNotifier::failed);
        n.notifyRunEnded("lenet 火", "finished", QString(), QJsonObject{{"test_accuracy", 0.9123}, {"seconds", 12.5}});
        QTRY_COMPARE_WITH_TIMEOUT(delivered.count(), 1, 5000);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(delivered[0][0].toString(), QString("run_finished"));
        QCOMPARE(delivered[0][1].toInt(), 200);
        QCOMPARE(sink.bodies.size(), 1);
        QVERIFY(sink.heads[0].startsWith("POST /hook?key=secret HTTP/1.1"));
        QVERIFY(sink.heads[0].toLower().contains("content-type: application/json"));
        QJsonParseError pe;
        const QJsonObject o = QJsonDocument::fromJson(sink.bodies[0], &pe).object();
        QCOMPARE(pe.error, QJsonParseError::NoError);
        QString message;
        if (name == "generic") {
            QCOMPARE(o["source"].toString(), QString("headroom"));
            QCOMPARE(o["event"].toString(), QString("run_finished"));
            QCOMPARE(o["details"].toObject()["status"].toString(), QString("finished"));
            QCOMPARE(o["details"].toObject()["metrics"].toObject()["test_accuracy"].toDouble(), 0.9123);
            message = o["title"].toString() + "\n" + o["text"].toString();
        } else if (name == "wecom" || name == "dingtalk") {
            QCOMPARE(o["msgtype"].toString(), QString("text"));
            message = o["text"].toObject()["content"].toString();
        } else if (name == "feishu") {
            QCOMPARE(o["msg_type"].toString(), QString("text"));
            message = o["content"].toObject()["text"].toString();
        } else {
            QCOMPARE(o.keys(), QStringList{"text"});
            message = o["text"].toString();
        }
        QVERIFY2(message.contains("lenet 火") && message.contains("finished") && message.contains("91.23"),
                 qPrintable(message));
    }

    void failedRunAndEpochSwitches() {
        HttpSink sink;
        WebhookNotifier n;
        WebhookNotifier::Settings s;
        s.url = sink.url();
        s.everyEpochs = 2;
        s.onFinished = false;
        n.setSettings(s);
        QSignalSpy delivered(&n, &WebhookNotifier::delivered);
        hr::EpochEvent e;
        e.train_loss = 0.5;
        e.test_accuracy = 0.8;
        for (int ep = 1; ep <= 5; ++ep) {
            e.epoch = ep;
            n.notifyEpoch("mlp", e, 5);
        }
        n.notifyRunEnded("mlp", "finished");  // off
        n.notifyRunEnded("mlp", "failed", "loss became NaN");
        QTRY_COMPARE_WITH_TIMEOUT(delivered.count(), 3, 5000);  // epochs 2 and 4, and the failure
        QTest::qWait(200);
        QCOMPARE(delivered.count(), 3);
        QStringList events;
        for (const QByteArray& b : sink.bodies) events << QJsonDocument::fromJson(b).object()["event"].toString();
        events.sort();
        QCOMPARE(events, (QStringList{"epoch", "epoch", "run_failed"}));
        for (const QByteArray& b : sink.bodies) {
            const QJsonObject o = QJsonDocument::fromJson(b).object();
            if (o["event"] == "run_failed") QCOMPARE(o["details"].toObject()["error"].toString(), QString("loss became NaN"));
            else QVERIFY(o["details"].toObject()["epoch"].toInt() % 2 == 0);
        }
    }

    void httpErrorIsReported() {
        HttpSink sink(500);
        WebhookNotifier n;
        WebhookNotifier::Settings s;
        s.url = sink.url();
        n.setSettings(s);
        QSignalSpy failed(&n, &WebhookNotifier::failed);
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("Webhook .* failed"));
        n.notifyRunEnded("mlp", "stopped");
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 5000);
        QVERIFY(failed[0][1].toString().contains("500") || failed[0][1].toString().contains("Internal"));
        QVERIFY(!failed[0][1].toString().contains("secret"));  // the URL's query (a token) is not logged
    }

    void timesOutWhenServerNeverAnswers() {
        HttpSink sink(200, /*answer=*/false);
        WebhookNotifier n;
        WebhookNotifier::Settings s;
        s.url = sink.url();
        s.timeoutMs = 400;
        n.setSettings(s);
        QSignalSpy delivered(&n, &WebhookNotifier::delivered);
        QSignalSpy failed(&n, &WebhookNotifier::failed);
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression("Webhook .* failed"));
        QElapsedTimer t;
        t.start();
        QVERIFY(n.send("run_finished", "title", "text", {}));
        QCOMPARE(n.inFlight(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 5000);
        QVERIFY(t.elapsed() >= 300);
        QVERIFY(t.elapsed() < 4000);
        QCOMPARE(delivered.count(), 0);
        QCOMPARE(n.inFlight(), 0);
        QVERIFY2(failed[0][1].toString().contains("no answer"), qPrintable(failed[0][1].toString()));
        QCOMPARE(sink.bodies.size(), 1);  // the request did arrive
    }

    void noUrlSendsNothing() {
        WebhookNotifier n;
        QVERIFY(!n.send("x", "t", "", {}));
        n.notifyRunEnded("a", "finished");
        QCOMPARE(n.inFlight(), 0);
    }

    void desktopNotifierDegradesOffscreen() {
        DesktopNotifier d;
        // offscreen has no tray: it says so instead of failing
        QCOMPARE(d.notifyRunEnded("a", "finished"), DesktopNotifier::available());
    }
};

QTEST_MAIN(TestWebhook)
#include "test_webhook.moc"
