#pragma once
// Addressing a layer in a ModelSpec: {i} is layers[i]; {i, 0, j} is layers[i].body[j];
// {i, 1, j} is layers[i].shortcut[j]; residual blocks nest, so paths grow by (branch, index) pairs.
#include <QList>
#include <QString>
#include <vector>

#include "nn/model_spec.h"

namespace hrw {

using LayerPath = QList<int>;

enum Branch { BodyBranch = 0, ShortcutBranch = 1 };

// The list holding the layer at `path` (nullptr when the path is not valid) and its index there.
std::vector<hr::LayerSpec>* layerList(hr::ModelSpec& spec, const LayerPath& parentPath);
const std::vector<hr::LayerSpec>* layerList(const hr::ModelSpec& spec, const LayerPath& parentPath);
hr::LayerSpec* layerAt(hr::ModelSpec& spec, const LayerPath& path);
const hr::LayerSpec* layerAt(const hr::ModelSpec& spec, const LayerPath& path);
// The parent list's path: {i, 0, j} -> {i, 0}; {i} -> {}.
LayerPath parentListPath(const LayerPath& path);
// "3", "4.body.1", "4.shortcut.0": the state_dict prefix core reports for the layer.
QString layerPathString(const LayerPath& path);

}  // namespace hrw
