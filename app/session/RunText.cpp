#include "session/RunText.h"

#include "train/events.h"

#include <cmath>

#include "i18n/CoreText.h"
#include <QCoreApplication>

#include "data/table.h"
#include "data/text_data.h"
#include "train/preset_training.h"
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

namespace hrapp {
QString logText(const hr::LogEvent& e) {
    return e.text.translatable() ? messageText(e.text) : QString::fromStdString(e.message);
}

QString presetTrainingText(const hr::PresetTraining& t) {
    if (t.steps == 0)  // an image or table preset: measured in epochs, its data named or the user's
        return QCoreApplication::translate("RunText", "trains with: %1, %2 lr %3 (%4 schedule), weight decay %5, batch %6, "
                                                      "%7 epochs")
            .arg(t.data.empty() ? QCoreApplication::translate("RunText", "the data you give (--data)")
                                : QString::fromStdString(t.data),
                 QString::fromStdString(t.optimizer.kind), QString::number(t.optimizer.lr),
                 QString::fromStdString(t.schedule.kind), QString::number(t.optimizer.weight_decay),
                 QString::number(t.batch), QString::number(t.epochs));
    return QCoreApplication::translate("RunText",
                                       "trains with: %1 (%2 tokens), %3 lr %4 to %5 (%6 warm-up steps, cosine), weight "
                                       "decay %7, gradient norm clipped to %8, batch %9, %10 steps")
        .arg(QString::fromStdString(t.data), QString::fromStdString(t.tokenizer), QString::fromStdString(t.optimizer.kind),
             QString::number(t.optimizer.lr), QString::number(t.schedule.min_lr), QString::number(t.schedule.warmup_steps),
             QString::number(t.optimizer.weight_decay), QString::number(t.optimizer.grad_clip), QString::number(t.batch))
        .arg(t.steps);
}

QString dataPresetText(const std::string& data) {
    const QString preset = QString::fromStdString(hr::default_preset_for_data(data));
    if (hr::is_table_data(data)) return QCoreApplication::translate("RunText", "%1, the model for tables").arg(preset);
    if (hr::is_token_data(data)) return QCoreApplication::translate("RunText", "%1, the language model for text").arg(preset);
    return QCoreApplication::translate("RunText", "%1, the model for images").arg(preset);
}
}  // namespace hrapp
