#pragma once
// Picks the backend for --device auto | cpu | cuda:N.
#include <memory>
#include <string>

#include "backend/backend.h"

namespace hr {

// `note` receives a line for the user when a choice was made for them ("device auto: ...").
// InputError for a device that does not exist or cannot be used, naming what to do instead.
std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::shared_ptr<MemoryLedger> ledger,
                                      bool tf32, std::string* note);
// "cpu" or "cuda:N" that `device` resolves to (auto: cuda:0 when a GPU works, else cpu).
std::string resolve_device(const std::string& device);

}  // namespace hr
