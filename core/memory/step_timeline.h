#pragma once
// StepTimeline: the memory of one training step over its phases (issue 47). A step is a list of phases
// (forward of layer i, recompute of checkpointed block j, backward of layer i, the loss, gradient
// reduction, offload transfers, the optimizer update, a pipeline stage's sends and receives); each phase
// holds the events that
// happen in it (category, layer, +bytes when a tensor starts being needed, -bytes when its last reader
// is done), and every event carries the live bytes by category after it.
//
// What "live" means here: Headroom allocates everything a run needs before the first step (the ledger's
// figures), so within a step nothing is allocated. The timeline is the liveness of those buffers: the
// step starts with `base` (every category as the ledger has it, activations at zero: nothing is saved
// yet), a layer's forward makes its saved tensors and output live, its backward ends them, a
// checkpointed block keeps only its output until its recompute. This is what PyTorch's allocator would
// show for the same step; its peak is at most the ledger's activations plus the rest.
//
// The same recorder is fed two ways: by the running model and training state during one chosen step
// (measured), and by the planner's walk over the dry-run state of any configuration (predicted). Since
// both share the byte accounting (Model::timeline_bytes), their equality guards the walk's order only;
// tests/unit/test_step_timeline.cpp checks the peak against hand-computed accounts and PyTorch.
// Not thread-safe: one recorder belongs to one step on one thread.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/message.h"
#include "memory/category.h"

namespace hr {

enum class StepPhaseKind : int { forward = 0, recompute, loss, backward, reduce, offload, update, send, receive, gather };
constexpr StepPhaseKind kLastStepPhaseKind = StepPhaseKind::gather;
const char* step_phase_kind_name(StepPhaseKind k);  // "forward", "recompute", ...

struct StepPhase {
    StepPhaseKind kind = StepPhaseKind::forward;
    int layer = -1;        // forward/backward: the top-level layer's index (model numbering)
    int block = -1;        // recompute: the checkpointed block's index; gather: the unit's (ZeRO-3)
    int micro = 0;         // which micro-batch (0-based)
    std::string label;     // the layer's label ("conv2d", "transformer_block"), for people; send/receive: what
                           // moves ("activations", "gradient"; a first stage's receive: "input", the batch's rows)
    int peer = -1;         // send/receive: the other pipeline stage (-1: none, the input's copy)
};

struct TimelineEvent {
    int phase = 0;                     // index into StepTimeline::phases
    MemCategory category = MemCategory::activations;
    int layer = -1;
    std::int64_t delta = 0;            // bytes: + a tensor becomes needed, - its last reader is done
    CategoryBytes live{};              // after this event
    std::size_t live_total = 0;
};

struct StepTimeline {
    std::int64_t step = -1;            // the training step (measured); -1 for a prediction
    int rank = 0;
    CategoryBytes base{};              // live at the step's start
    std::vector<StepPhase> phases;
    std::vector<TimelineEvent> events;     // bounded by kMaxEvents (truncated: true when more happened)
    bool truncated = false;
    // the peak (the first event with the highest live total; -1: no event, the base is the peak)
    int peak_event = -1;
    int peak_phase = -1;
    std::size_t peak_total = 0;
    CategoryBytes at_peak{};
    // the layers whose activations are live at the peak (first and last index; -1: none)
    int peak_first_layer = -1, peak_last_layer = -1;
    std::size_t max_phase_events = 0;

    static constexpr std::size_t kMaxEvents = 200000;
    bool empty() const { return phases.empty(); }
    // the live bytes at the end of phase p (the base before any event)
    CategoryBytes live_after_phase(int p) const;
};

class StepRecorder {
public:
    explicit StepRecorder(const CategoryBytes& base, std::int64_t step = -1, int rank = 0);
    // a new phase; events until the next one belong to it
    void phase(StepPhaseKind kind, int layer = -1, int block = -1, const std::string& label = {}, int peer = -1);
    void set_micro(int micro) { micro_ = micro; }
    void use(MemCategory category, int layer, std::int64_t delta);
    // Finishes: the peak and its composition. Activations still live at the end are ended in a last
    // event of the last phase, so the step ends where it began.
    StepTimeline finish();
    const StepTimeline& current() const { return t_; }

private:
    StepTimeline t_;
    CategoryBytes live_{};
    int micro_ = 0;
    // per layer: activation bytes live now
    std::map<int, std::int64_t> layer_live_;
    int peak_first_ = -1, peak_last_ = -1;
};

// The same phases and events from another base (the planner walks before it knows every category).
StepTimeline step_timeline_with_base(const StepTimeline& t, const CategoryBytes& base);

// The peak's composition: categories of at least 1 % of the peak, largest first, four at most; the
// rest summed (rest: true). Activations name the layers whose tensors are live then.
struct PeakPart {
    MemCategory category = MemCategory::other;
    std::size_t bytes = 0;
    int first_layer = -1, last_layer = -1;  // activations: the live layers (-1: not said)
    bool rest = false;
};
std::vector<PeakPart> peak_parts(const StepTimeline& t);
// One part as a translatable message; its %1 is the category's English name (the interface puts its
// own name there: widgets/text/CoreText.h peakText).
Message peak_part_message(const PeakPart& part);
// The sentence: "peak %1 during %2: %3" (timeline.peak; %2 describe_phase, %3 the parts joined by ", ")
// or "peak %1 at the start of the step: %2" (timeline.peak_at_start), as a message whose arguments are
// English; the interface builds the same sentence from translated pieces (peakText).
Message explain_peak(const StepTimeline& t);
constexpr MessageText kPeakSentence = HR_MSG("timeline.peak", "peak %1 during %2: %3");
constexpr MessageText kPeakAtStart = HR_MSG("timeline.peak_at_start", "peak %1 at the start of the step: %2");
// one phase in words ("forward of layer 3 (conv2d)", "recompute of block 1", "optimizer update",
// "the pipeline receive of activations from stage 0")
Message describe_phase(const StepPhase& p);
std::string format_bytes_short(std::size_t bytes);  // "58.1 MiB"

// run.json's "timeline" (docs/run-json.md): the peak, its phase and composition, and the live totals at
// the end of each phase (at most kJsonPhases, evenly thinned), so the record stays small.
constexpr std::size_t kJsonPhases = 512;
nlohmann::json step_timeline_summary_json(const StepTimeline& t);
// Back from that summary: a timeline with the peak's phase, bytes, composition and live layers only (what
// explain_peak and the interface's peakText need; the report's sentence). An empty one for anything else.
StepTimeline step_timeline_peak_from_json(const nlohmann::json& summary);
// The whole timeline's one JSON form (a rank's result line to its parent, train/record_json.h): every
// phase and event, so the parent's summary is the rank's own. Events are [phase, category, layer, delta]
// (live bytes are recomputed from the base on reading). from_json throws InputError on a malformed form.
void to_json(nlohmann::json& j, const StepTimeline& t);
void from_json(const nlohmann::json& j, StepTimeline& t);
// Chrome's Trace Event Format (the JSON object form): one complete event ("ph":"X") per phase, one
// counter ("ph":"C") per event with the live bytes of each category, timestamps in microseconds of a
// synthetic clock (1 µs per event; phases without events last 1 µs). Perfetto and chrome://tracing
// open it. name: the process's name in the viewer ("predicted", "measured step 5").
nlohmann::json step_timeline_trace_json(const StepTimeline& t, const std::string& name);

}  // namespace hr
