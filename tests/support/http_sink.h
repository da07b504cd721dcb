#pragma once
// A tiny HTTP/1.1 server on 127.0.0.1 for webhook tests (GUI-labelled tests: it needs Qt Network):
// collects each request's head and body, answers with `status` (or never, to test time-outs).
#include <QHash>
#include <QList>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>

namespace hrtest {

class HttpSink : public QObject {
public:
    explicit HttpSink(int status = 200, bool answer = true) : m_status(status), m_answer(answer) {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* s = m_server.nextPendingConnection()) {
                m_sockets << s;
                connect(s, &QTcpSocket::readyRead, this, [this, s] { onData(s); });
            }
        });
        m_server.listen(QHostAddress::LocalHost, 0);
    }
    QUrl url(const QString& path = "/hook") const {
        return QUrl(QString("http://127.0.0.1:%1%2?key=secret").arg(m_server.serverPort()).arg(path));
    }
    QList<QByteArray> bodies;
    QList<QByteArray> heads;

private:
    void onData(QTcpSocket* s) {
        QByteArray& buf = m_buffers[s];
        buf += s->readAll();
        const int end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const QByteArray head = buf.left(end);
        int length = 0;
        for (const QByteArray& line : head.split('\n'))
            if (line.toLower().startsWith("content-length:")) length = line.mid(15).trimmed().toInt();
        if (buf.size() < end + 4 + length) return;
        heads << head;
        bodies << buf.mid(end + 4, length);
        buf.clear();
        if (!m_answer) return;
        const QByteArray body = "{\"ok\":true}";
        s->write("HTTP/1.1 " + QByteArray::number(m_status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
        s->flush();
        s->disconnectFromHost();
    }
    QTcpServer m_server;
    QList<QTcpSocket*> m_sockets;
    QHash<QTcpSocket*, QByteArray> m_buffers;
    int m_status;
    bool m_answer;
};

}  // namespace hrtest
