#pragma once
// The flags `headroom train` and `headroom plan` share: model, batch, optimizer, strategies, device.
#include <QString>
#include <string>
#include <vector>

#include "train/config.h"

namespace hrapp {

struct BadFlag {
    QString message;
};

struct RunFlags {
    hr::TrainConfig config;
    std::string preset = "seed-cnn", modelFile, outDir, dbPath, runName, budget;
    double labelSmoothing = -1;
    bool quiet = false, noHistory = false, json = false, help = false;
};

// command: "train" or "plan" (plan takes the model, batch, optimizer, strategy and device flags plus
// --budget and --json). Throws BadFlag with one message naming the flag.
RunFlags parseRunFlags(const std::vector<std::string>& args, const std::string& command);
// Fills config.model from --preset or --model (hr::InputError for a bad file or name).
void resolveModel(RunFlags& flags);

}  // namespace hrapp
