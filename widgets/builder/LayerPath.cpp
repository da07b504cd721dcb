#include "builder/LayerPath.h"

namespace hrw {

const std::vector<hr::LayerSpec>* layerList(const hr::ModelSpec& spec, const LayerPath& parentPath) {
    const std::vector<hr::LayerSpec>* list = &spec.layers;
    for (int k = 0; k + 1 < parentPath.size(); k += 2) {
        const int i = parentPath[k];
        if (i < 0 || i >= int(list->size())) return nullptr;
        const hr::LayerSpec& l = (*list)[size_t(i)];
        if (l.type != "residual") return nullptr;
        list = parentPath[k + 1] == ShortcutBranch ? &l.shortcut : &l.body;
    }
    if (parentPath.size() % 2 != 0) return nullptr;
    return list;
}

std::vector<hr::LayerSpec>* layerList(hr::ModelSpec& spec, const LayerPath& parentPath) {
    return const_cast<std::vector<hr::LayerSpec>*>(layerList(static_cast<const hr::ModelSpec&>(spec), parentPath));
}

const hr::LayerSpec* layerAt(const hr::ModelSpec& spec, const LayerPath& path) {
    if (path.isEmpty() || path.size() % 2 == 0) return nullptr;
    const auto* list = layerList(spec, parentListPath(path));
    if (!list) return nullptr;
    const int i = path.last();
    if (i < 0 || i >= int(list->size())) return nullptr;
    return &(*list)[size_t(i)];
}

hr::LayerSpec* layerAt(hr::ModelSpec& spec, const LayerPath& path) {
    return const_cast<hr::LayerSpec*>(layerAt(static_cast<const hr::ModelSpec&>(spec), path));
}

LayerPath parentListPath(const LayerPath& path) { return path.mid(0, qMax(0, int(path.size()) - 1)); }

QString layerPathString(const LayerPath& path) {
    QString s;
    for (int k = 0; k < path.size(); ++k) {
        if (k == 0) {
            s = QString::number(path[0]);
        } else if (k % 2 == 1) {
            s += path[k] == ShortcutBranch ? QStringLiteral(".shortcut") : QStringLiteral(".body");
        } else {
            s += QLatin1Char('.') + QString::number(path[k]);
        }
    }
    return s;
}

}  // namespace hrw
