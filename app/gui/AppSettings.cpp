#include "gui/AppSettings.h"

#include "gui/Installation.h"

#include <QApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QTranslator>

namespace hrapp {

QString installTranslators(const QString& language) {
    static QTranslator* appTr = nullptr;
    static QTranslator* qtTr = nullptr;
    if (appTr) {
        QCoreApplication::removeTranslator(appTr);
        delete appTr;
        appTr = nullptr;
    }
    if (qtTr) {
        QCoreApplication::removeTranslator(qtTr);
        delete qtTr;
        qtTr = nullptr;
    }
    QString lang = language;
    if (lang == QLatin1String("system") || lang.isEmpty())
        lang = QLocale::system().name().startsWith(QLatin1String("zh")) ? QStringLiteral("zh_CN") : QStringLiteral("en");
    if (lang == QLatin1String("en")) return lang;
    appTr = new QTranslator;
    const QString file = translationFile(lang);  // installed or build-tree copy, else the compiled-in one
    if (file.isEmpty() || !appTr->load(file)) {
        delete appTr;
        appTr = nullptr;
        return QStringLiteral("en");
    }
    QCoreApplication::installTranslator(appTr);
    qtTr = new QTranslator;
    if (qtTr->load(QStringLiteral("qtbase_%1").arg(lang), QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qtTr);
    else {
        delete qtTr;
        qtTr = nullptr;
    }
    return lang;
}

void applyTheme(const QString& theme) {
    static QString originalStyle;
    static QPalette originalPalette;
    static bool saved = false;
    if (!saved) {
        originalStyle = QApplication::style()->name();
        originalPalette = QApplication::palette();
        saved = true;
    }
    if (theme == QLatin1String("dark")) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QPalette p;
        const QColor window(0x2f, 0x31, 0x36), base(0x24, 0x26, 0x2a), text(0xe6, 0xe6, 0xe6);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, window);
        p.setColor(QPalette::ToolTipBase, base);
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, window);
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, Qt::red);
        p.setColor(QPalette::Link, QColor(0x5d, 0xa9, 0xe9));
        p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb5));
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
        p.setColor(QPalette::Mid, QColor(0x50, 0x50, 0x55));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
        QApplication::setPalette(p);
    } else if (theme == QLatin1String("light")) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(QApplication::style()->standardPalette());
    } else {
        QApplication::setStyle(QStyleFactory::create(originalStyle));
        QApplication::setPalette(originalPalette);
    }
}

bool isDarkPalette() { return QApplication::palette().color(QPalette::Window).lightness() < 128; }

}  // namespace hrapp
