// The run folder of a training run (train/resume.h): --init-from weights, or the checkpoint a resumed run
// continues from, config.json, and the checkpointer the loop hands its steps to.
#include <algorithm>
#include <exception>
#include <filesystem>

#include "base/error.h"
#include "dist/communicator.h"
#include "io/hf_folder.h"
#include "io/safetensors.h"
#include "nn/layer.h"
#include <cstring>
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "strategy/training_state.h"
#include "train/checkpoint.h"
#include "train/hf_model.h"
#include "train/trainer.h"

namespace hr {

namespace {
// --init-from for a language model: a Hugging Face model or adapter folder as above. A GPT (nanoGPT layout) takes nanoGPT's names and Hugging Face GPT-2's
// (GPT2LMHeadModel or GPT2Model, Conv1D weights [in, out] transposed, mask buffers ignored, the tied head
// under either name: train/checkpoint.h load_model_state), with DDP's "module." prefix stripped; a file
// with other names is matched by order as for image models (train/resume.h load_weights_into).
WeightsMatch load_language_model_weights(Model& model, const std::string& path, const std::string& base_dir) {
    if (is_hf_model_folder(path) || is_peft_adapter_folder(path)) {
        load_hf_folder_weights(model, path, base_dir);
        return {};
    }
    if (!is_gpt_layout(model.spec())) return load_weights_into(model, path);
    SafeTensorsFile file = read_safetensors(path);
    WeightsMatch m;
    if (!file.tensors.empty() && std::all_of(file.tensors.begin(), file.tensors.end(), [](const SafeTensor& t) {
            return t.name.rfind("module.", 0) == 0;
        })) {
        for (auto& t : file.tensors) t.name = t.name.substr(7);
        m.stripped_module = true;
    }
    auto in_file = [&](const std::string& name) {
        return file.find(name) || (name.rfind("transformer.", 0) == 0 && file.find(name.substr(12)));
    };
    const auto sd = model.state_dict();
    bool named = true;
    for (const auto& nt : sd) {
        if (nt.tied || in_file(nt.name)) continue;
        bool via_head = false;  // an embedding tied to a head: the head's copy will do
        for (const auto& other : sd) via_head = via_head || (other.tied && other.tensor.raw() == nt.tensor.raw() && in_file(other.name));
        named = named && via_head;
    }
    if (!named) return load_weights_into(model, path);
    load_model_state(model, file, path);
    return m;
}

}  // namespace

void Trainer::set_run_folder(const std::string& dir, bool resume) {
    run_dir_ = dir;
    resume_ = resume && !dir.empty();
}

RunCursor Trainer::begin_run_folder(TrainingState& st, std::int64_t total_steps, std::int64_t steps_per_epoch) {
    const RunLog log{callbacks_.on_log};
    const TrainConfig& c = config_;
    RunCursor start;
    start.total_steps = total_steps;
    // Several ranks: rank 0 alone has the run folder (the others write nothing, train/resume.h); every
    // rank learns from it whether there is one and whether the run resumes, so all take the same path.
    Communicator* comm = st.communicator();
    const bool ranks = comm && comm->world_size() > 1;
    const bool root = st.strategy().rank == 0;
    bool folder = !run_dir_.empty(), resume = resume_;
    if (ranks) {
        const int v = static_cast<int>(comm->all_reduce_value(root ? (folder ? 1.0 : 0.0) + (resume ? 2.0 : 0.0) : 0.0,
                                                              ReduceOp::max));
        folder = (v & 1) != 0;
        resume = (v & 2) != 0;
        resume_ = resume;
    }
    if (!c.init_from.empty() && !resume) {
        WeightsMatch m;
        st.load_weights([&](Model& model) {
            m = is_token_model(c.model) ? load_language_model_weights(model, c.init_from, c.init_base)  // lmranks
                                        : load_weights_into(model, c.init_from);
        });
        weights_notes_ = describe_weights_match(m);
        for (const auto& line : weights_notes_) log(LogLevel::info, line);
        log(LogLevel::info, Message(HR_MSG("run.init_from", "initial weights from %1"), {c.init_from}));
    }
    if (resume) {
        // rank 0 reads the folder and checks the checkpoint against this run before anything changes;
        // every rank gets its verdict, then the checkpoint (broadcast), and takes its part of it
        Checkpoint ck;
        std::exception_ptr refused;
        if (root) {
            try {
                ck = read_latest_checkpoint(run_dir_);
                if (ck.seed != c.seed)
                    throw InputError(HR_MSG("resume.seed", "%1 was written with seed %2 but the run's config.json has seed %3; "
                                                           "the folder is inconsistent: start the run again"),
                                     {ck.path, std::to_string(ck.seed), std::to_string(c.seed)});
                if (ck.cursor.step >= total_steps)
                    throw InputError(HR_MSG("resume.already_done",
                                            "the run in %1 has already trained %2 steps, and the length asked for is %3 steps; "
                                            "give a longer --steps or --epochs to continue it"),
                                     {run_dir_, std::to_string(ck.cursor.step), std::to_string(total_steps)});
                check_checkpoint(st, ck, ck.path);
            } catch (const Error&) {
                refused = std::current_exception();
            }
        }
        if (ranks && !all_ranks_agree(*comm, !refused) && !refused)
            throw InputError(HR_MSG("resume.rank0_refused",
                                    "rank 0 could not resume the run from its folder; its message says why"));
        if (refused) std::rethrow_exception(refused);
        if (ranks) broadcast_checkpoint(st, ck);
        restore_checkpoint(st, ck, ck.path);
        if (ranks && ck.world_size != comm->world_size())
            log(LogLevel::info, Message(HR_MSG("run.resume_other_ranks", "the checkpoint was written on %1 rank(s); it "
                                                                         "goes on on %2"),
                                        {std::to_string(ck.world_size), std::to_string(comm->world_size())}));
        else if (!ranks && ck.world_size > 1)
            log(LogLevel::info, Message(HR_MSG("run.resume_one_process", "the checkpoint was written on %1 ranks; it goes "
                                                                         "on as one process"),
                                        {std::to_string(ck.world_size)}));
        std::error_code ec;  // the folder is a run in progress again (run.json comes last, at the end)
        if (!run_dir_.empty()) std::filesystem::remove(std::filesystem::path(run_dir_) / "run.json", ec);
        start = ck.cursor;
        if (start.step_in_epoch >= steps_per_epoch) {  // written at the end of an epoch: the next one
            start.train_seconds += start.epoch_train_seconds;
            start.epoch += 1;
            start.step_in_epoch = 0;
            start.loss_sum = 0;
            start.correct = start.seen = 0;
            start.epoch_train_seconds = 0;
        }
        start.epochs.erase(std::remove_if(start.epochs.begin(), start.epochs.end(),
                                          [&](const EpochEvent& e) { return e.epoch >= start.epoch; }),
                           start.epochs.end());
        log(LogLevel::info, Message(HR_MSG("run.resuming", "resuming from %1: step %2 of %3 (epoch %4)"),
                                    {ck.path, std::to_string(ck.cursor.step), std::to_string(total_steps),
                                     std::to_string(start.epoch)}));
        if (c.schedule.kind == "cosine" && ck.cursor.total_steps != total_steps)
            log(LogLevel::warning, Message(HR_MSG("run.cosine_length", "the cosine learning-rate schedule depends on the "
                                                                      "run's length: with %1 steps instead of %2 it changes "
                                                                      "from step %3 on"),
                                           {std::to_string(total_steps), std::to_string(ck.cursor.total_steps),
                                            std::to_string(ck.cursor.step + 1)}));
        start.total_steps = total_steps;
    }
    // config.json records the stages as run (balanced ones too, as --pipeline-split's counts): a resume on as many
    // stages keeps them, whatever the balancer's costs are then (relayout_for_resume; another number: balanced anew)
    TrainConfig recorded = c;
    const std::vector<int>& first = st.strategy().stage_first;
    if (recorded.strategy.pipeline_split.empty() && first.size() > 2)
        for (std::size_t k = 0; k + 1 < first.size(); ++k) recorded.strategy.pipeline_split.push_back(first[k + 1] - first[k]);
    if (!run_dir_.empty()) write_run_config(run_dir_, recorded);  // rank 0 (or the one process) only
    if (folder)
        checkpoints_.configure(run_dir_, c, [log](const std::string& m) { log(LogLevel::warning, m); },
                               ranks ? comm : nullptr);
    return start;
}

}  // namespace hr
