#include "session/RunText.h"

#include <cmath>

#include "i18n/CoreText.h"
#include "train/trainer.h"

namespace hrapp {

QString formatDuration(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("--:--");
    const qint64 t = qint64(std::llround(s));
    if (t >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(t / 3600)
            .arg((t / 60) % 60, 2, 10, QLatin1Char('0'))
            .arg(t % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(t / 60).arg(t % 60, 2, 10, QLatin1Char('0'));
}

QString messageText(const hr::Message& m) { return coreText(m); }

}  // namespace hrapp

namespace hrapp {
QString resultError(const hr::TrainResult& r) {
    return r.error_messages.empty() ? QString::fromStdString(r.error) : coreText(r.error_messages);
}
}  // namespace hrapp
