// RunStore's TrainConfig side: kept apart so code that only uses the JSON overloads does not pull in
// the config serialisers. The JSON crosses once: nlohmann's text goes into the database as is, and
// comes back out of it straight into nlohmann (no QJsonObject in between).
#include <QSqlQuery>

#include "base/error.h"
#include "store/run_store.h"
#include "train/config.h"

namespace hrapp {

qint64 RunStore::beginRun(const hr::TrainConfig& config, const QString& name, const QString& outDir) {
    const QString n = name.isEmpty() ? defaultRunName(QString::fromStdString(config.model.name), QString::fromStdString(config.data))
                                     : name;
    nlohmann::json c = hr::train_config_to_json(config);
    // the run's folder travels with the stored config (train_config_from_json ignores the key), so
    // `headroom generate --run ID` finds the weights
    if (!outDir.isEmpty()) c["out_dir"] = outDir.toStdString();
    return insertRun(n, QString::fromStdString(hr::model_spec_to_json(config.model).dump()),
                     QString::fromStdString(c.dump()), QString::fromStdString(config.device));
}

std::optional<hr::TrainConfig> RunStore::runConfig(qint64 runId) const {
    if (!isOpen()) return std::nullopt;
    QSqlQuery q(db());
    q.prepare(QStringLiteral("SELECT config, spec FROM runs WHERE id = ?"));
    q.addBindValue(runId);
    if (!q.exec() || !q.next()) return std::nullopt;
    const std::string configText = q.value(0).toString().toStdString(), specText = q.value(1).toString().toStdString();
    try {
        hr::TrainConfig c = configText.empty() ? hr::TrainConfig{} : hr::train_config_from_json(nlohmann::json::parse(configText));
        if (!specText.empty()) c.model = hr::model_spec_from_json(nlohmann::json::parse(specText));
        return c;
    } catch (const nlohmann::json::exception& e) {
        throw hr::InputError(HR_MSG("store.bad_config", "run %1: the stored configuration is not valid JSON (%2)"),
                             {std::to_string(runId), e.what()});
    }
}

}  // namespace hrapp
