// RunStore::beginRun(TrainConfig): kept apart so code that only uses the JSON overload does not pull in
// the config serialisers.
#include <QJsonDocument>

#include "store/run_store.h"
#include "train/config.h"

namespace hrapp {

qint64 RunStore::beginRun(const hr::TrainConfig& config, const QString& name) {
    const auto toObject = [](const nlohmann::json& j) {
        return QJsonDocument::fromJson(QByteArray::fromStdString(j.dump())).object();
    };
    QJsonObject cfg = toObject(hr::train_config_to_json(config));
    QJsonObject spec = toObject(hr::model_spec_to_json(config.model));
    return beginRun(cfg, spec, QString::fromStdString(config.device), name);
}

}  // namespace hrapp
