#pragma once
// How a run that ran out of memory is reported (at setup or during a step, for every workload alike): the
// request, what is in use by category, the largest layers and the strategies that cut the largest category.
#include <cstddef>
#include <string>
#include <vector>

#include "base/message.h"
#include "memory/allocator.h"
#include "memory/ledger.h"
#include "nn/model_spec.h"

namespace hr {

struct TrainConfig;
struct TrainResult;
class Backend;

// The message for an out-of-memory failure: what was asked, what is in use by category and the
// largest layers, and the strategies that cut the largest category; as translatable sentences, and
// as their English joined by spaces.
std::vector<Message> out_of_memory_messages(const OutOfMemory& e, const ModelSpec& spec, const std::string& device);
std::string describe_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device);
// A failed result carrying that message, the largest category and the limit the advice searches under.
void fill_out_of_memory(TrainResult& r, const OutOfMemory& e, const ModelSpec& spec, const std::string& device);
// The cap on the training device's allocations: --memory-limit, else, on the CPU, the host memory the
// kernel says is available now (MemAvailable, after the data was loaded). Every buffer is allocated at
// setup, so a run larger than the machine's free RAM is refused there with the out-of-memory account and
// advice, before anything is touched, instead of being killed by the kernel mid-run.
std::size_t run_memory_limit(const TrainConfig& c, Backend& be);

}  // namespace hr
