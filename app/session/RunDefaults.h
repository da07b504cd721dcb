#pragma once
// The defaults of a run, the same in both front ends: the window's setup panel starts from them and
// `headroom train` applies its flags over them.
#include "train/config.h"

namespace hrapp {

// hr::TrainConfig's defaults, except: SGD momentum 0.9 (plain SGD at lr 0.01 learns seed-cnn too
// slowly for one epoch) and device "auto" (the GPU when one works, else the CPU).
inline hr::TrainConfig defaultTrainConfig() {
    hr::TrainConfig c;
    c.optimizer.momentum = 0.9;
    c.device = "auto";
    return c;
}

}  // namespace hrapp
