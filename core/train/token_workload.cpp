// The token workload (train/workload.h): a language model on text. The corpus is split and tokenized once;
// a training step takes random windows keyed on the step (so a resumed or multi-rank run sees the same
// windows), the loss is the cross-entropy per token with its gradient written over the logits, and an
// evaluation walks consecutive windows of the validation split.
// Instruction data (jsonl:FILE, data/instruct_data.h) trains on fixed windows whose targets are -100 where no
// loss is taken; the loss is then the mean over the targets counted in the whole global batch (evaluation:
// in all the windows evaluated), as PyTorch's cross_entropy(ignore_index=-100) over that batch gives.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/instruct_data.h"
#include "data/text_data.h"
#include "data/tokenizer.h"
#include "dist/communicator.h"
#include "nn/transformer_spec.h"
#include "strategy/training_state.h"
#include "train/config.h"
#include "train/result.h"
#include "train/workload.h"
#include "base/clock.h"

namespace hr {

namespace {

// A language model's run resumed: the tokenizer written into its folder when it started (byte has no file).
std::unique_ptr<Tokenizer> resumed_tokenizer(const std::string& spec, const std::string& dir) {
    // a file spec: the copy in the run's folder (the original may have moved since)
    std::string kind = tokenizer_spec_kind(spec);
    if (kind != "byte" && kind != "char" && kind != "hf-bpe" && kind != "sentencepiece" && kind.rfind("bpe:", 0) != 0)
        kind = std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.model") && !spec.ends_with(".json")
                   ? "sentencepiece"
                   : "hf-bpe";
    if (kind != "byte") {
        const bool json = kind == "char" || kind == "hf-bpe";
        const std::string file = (std::filesystem::path(dir) / (json ? "tokenizer.json" : "tokenizer.model")).string();
        if (!std::filesystem::exists(file))
            throw InputError(HR_MSG("resume.no_tokenizer",
                                    "%1 is missing, so the run in %2 cannot go on with the same tokens; the folder was "
                                    "written by an older Headroom or changed: start the run again"),
                             {file, dir});
    }
    return load_tokenizer(kind, dir);
}

// Several ranks: every rank reads the corpus and builds the tokenizer itself; they must hold the same tokens
// (a text file changed while they started would not). Compared by a 48-bit hash of each rank's tokens.
void check_same_tokens(Communicator& comm, const std::vector<std::int32_t>& train, const std::vector<std::int32_t>& valid) {
    std::uint64_t h = 1469598103934665603ull;
    for (const auto* v : {&train, &valid}) {
        h = (h ^ v->size()) * 1099511628211ull;
        for (std::int32_t t : *v) h = (h ^ static_cast<std::uint32_t>(t)) * 1099511628211ull;
    }
    const double mine = static_cast<double>(h >> 16);  // exact in a double
    const double hi = comm.all_reduce_value(mine, ReduceOp::max), lo = -comm.all_reduce_value(-mine, ReduceOp::max);
    if (hi != lo)
        throw InputError(HR_MSG("train.ranks_tokens_differ",
                                "the ranks read different text or built different tokenizers (%1 training tokens on "
                                "rank %2); give every rank the same --data file and --tokenizer, and do not change "
                                "the file while the run starts"),
                         {std::to_string(train.size()), std::to_string(comm.rank())});
}

class TokenWorkload final : public Workload {
public:
    TokenWorkload(const TrainConfig& c, const ResolvedStrategy& s, bool resume, std::string run_dir)
        : c_(c), s_(s), resume_(resume), run_dir_(std::move(run_dir)) {
        if (!resume) validate_tokenizer_spec(c.tokenizer);
        spec_ = c.model;
        apply_sequence_length(spec_, c.seq);
        T_ = spec_.input_shape[0];
        V_ = model_vocabulary(spec_);
    }

    const ModelSpec& spec() const override { return spec_; }

    void load(Communicator* comm, const WorkloadLog& log) override {
        if (is_jsonl_data(c_.data)) return load_instructions(comm, log);
        const auto t0 = std::chrono::steady_clock::now();
        TextCorpus corpus = load_text_corpus(c_.data);
        source_ = corpus.source;
        // resumed: the run's own tokenizer from its folder (the same ids, even if the text changed since)
        tokenizer_ = resume_ ? resumed_tokenizer(c_.tokenizer, run_dir_)
                             : corpus_tokenizer(c_.tokenizer, corpus);
        const Tokenizer& tok = *tokenizer_;
        if (tok.vocab_size() > V_)
            throw InputError(HR_MSG("train.vocab_too_small",
                                    "the %1 tokenizer has %2 tokens but model '%3' has a vocabulary of %4; set the token "
                                    "embedding's and lm_head's vocab_size (and num_classes) to at least %2"),
                             {tok.kind(), std::to_string(tok.vocab_size()), spec_.name, std::to_string(V_)});
        train_tokens_ = tok.encode(corpus.train_text);
        validation_tokens_ = tok.encode(corpus.validation_text);
        if (c_.train_limit > 0 && static_cast<std::int64_t>(train_tokens_.size()) > c_.train_limit)
            train_tokens_.resize(static_cast<std::size_t>(c_.train_limit));
        if (c_.test_limit > 0 && static_cast<std::int64_t>(validation_tokens_.size()) > c_.test_limit)
            validation_tokens_.resize(static_cast<std::size_t>(c_.test_limit));
        log(LogLevel::info, Message(HR_MSG("run.corpus", "%1 from %2: %3 training and %4 validation tokens (%5 tokenizer, "
                                                         "%6 tokens) in %7 s"),
                                    {corpus.spec, corpus.source, std::to_string(train_tokens_.size()),
                                     std::to_string(validation_tokens_.size()), tok.kind(),
                                     std::to_string(tok.vocab_size()), std::to_string(seconds_since(t0))}));
        if (comm) check_same_tokens(*comm, train_tokens_, validation_tokens_);
    }

    void make_batches(TrainingState& st, MemoryLedger& ledger, Backend& be) override {
        st_ = &st;
        be_ = &be;
        if (instruct_) {
            if (st.tp_head())
                throw InputError(HR_MSG("train.jsonl_tp_head",
                                        "instruction data (jsonl:) cannot train with a split head yet (its loss skips "
                                        "the prompt's tokens); leave out --tp-head"));
            wtrain_ = std::make_unique<WindowBatcher>(train_windows_, s_.rank_batch, c_.seed, &ledger, "training",
                                                      s_.sample_offset, c_.batch);
            weval_ = std::make_unique<WindowBatcher>(validation_windows_, s_.micro_batch, c_.seed, &ledger, "validation");
            return;
        }
        // several ranks: this rank's rows of every global batch of windows, the same windows as one process
        train_ = std::make_unique<TokenBatcher>(train_tokens_, s_.rank_batch, T_, c_.seed, &ledger, "training",
                                                s_.sample_offset, c_.batch);
        eval_ = std::make_unique<TokenBatcher>(validation_tokens_, s_.micro_batch, T_, c_.seed, &ledger, "validation");
    }

    std::int64_t steps_per_epoch() const override {
        return instruct_ ? wtrain_->steps_per_epoch() : train_->steps_per_epoch();
    }

    void describe(TrainResult& r) const override {
        r.train_samples = static_cast<std::int64_t>(train_tokens_.size());
        r.test_samples = static_cast<std::int64_t>(validation_tokens_.size());
        r.data_source = source_;
        r.tokenizer = tokenizer_->kind();
        r.vocab_size = tokenizer_->vocab_size();
        r.seq = T_;
        if (instruct_) {
            r.chat_template = template_;
            r.sequences = c_.sequences;
            r.train_samples = static_cast<std::int64_t>(train_windows_.tokens);
            r.test_samples = static_cast<std::int64_t>(validation_windows_.tokens);
            r.trained_tokens = train_windows_.trained_tokens;
            r.truncated_rows = train_windows_.truncated + validation_windows_.truncated;
        }
    }

    std::string batch_text() const override {
        return "batch " + std::to_string(c_.batch) + " x " + std::to_string(T_) + " tokens";
    }
    // the tokenizer's file, and the tokenizer_config.json of the model folder it came from (its chat template
    // goes into a GGUF export: train/gguf_export.h)
    void write_run_files(const std::string& dir) const override {
        tokenizer_->save(dir);
        const std::string file = tokenizer_spec_file(c_.tokenizer);
        if (file.empty()) return;
        std::error_code ec;
        const auto config = std::filesystem::path(file).parent_path() / "tokenizer_config.json";
        const auto target = std::filesystem::path(dir) / "tokenizer_config.json";
        if (!std::filesystem::is_regular_file(config, ec) || std::filesystem::equivalent(config, target, ec)) return;
        std::ifstream in(config, std::ios::binary);
        std::stringstream bytes;
        bytes << in.rdbuf();
        if (in) write_file_atomic(target.string(), bytes.str());
    }
    std::shared_ptr<const Tokenizer> tokenizer() const override { return tokenizer_; }

    std::int64_t units_per_row() const override { return T_; }
    bool counts_tokens() const override { return true; }
    std::int64_t rows_per_loss_weight() const override { return c_.batch; }

    // the windows are keyed on the step: nothing to skip after a resume
    void start_epoch(int, std::int64_t) override {}
    bool next_batch(std::int64_t step) override {
        if (instruct_) wtrain_->random_batch(step);
        else train_->random_batch(step);  // this rank's rows of the step's windows
        return true;
    }
    std::int64_t batch_rows() const override { return instruct_ ? wtrain_->rows() : train_->rows(); }
    std::pair<Tensor, Tensor> upload(std::int64_t r0, std::int64_t n) override {
        return instruct_ ? upload_rows(*wtrain_, r0, n) : upload_rows(*train_, r0, n);
    }
    LossResult loss(const Tensor& logits, const Tensor& targets, std::int64_t, std::int64_t n, float grad_scale,
                    Tensor& grad) override {
        // the gradient of the mean token loss overwrites the logits (no second (n, T, V) buffer)
        grad = logits;
        if (st_->tp_head())  // a split head: this rank's columns (strategy/tp_head.h), in place too
            return st_->tp_loss(logits, targets.reshape({n * T_}), grad, grad_scale);
        Tensor lv = grad.reshape({n * T_, V_});
        if (!instruct_) return be_->cross_entropy_inplace(lv, targets.reshape({n * T_}), true, grad_scale);
        // The op divides its sum by the n * T rows; the trainer weighs this micro-batch by share = n / batch.
        // The mean over the global batch's counted targets: the gradient per counted target is
        // loss_scale / counted = grad_scale / share / counted, and share * loss summed over the micro-batches
        // is the counted targets' summed loss / counted.
        const double share = static_cast<double>(n) / static_cast<double>(c_.batch);
        const double counted = static_cast<double>(std::max<std::int64_t>(1, wtrain_->step_counted()));
        const double k = static_cast<double>(n * T_) / (share * counted);
        LossResult r = be_->cross_entropy_inplace(lv, targets.reshape({n * T_}), true,
                                                  static_cast<float>(static_cast<double>(grad_scale) * k));
        r.loss *= k;
        return r;
    }

    void start_eval() override {
        windows_ = instruct_ ? weval_->eval_windows(c_.eval_tokens) : eval_->eval_windows(c_.eval_tokens);
        if (instruct_) eval_counted_ = weval_->counted_in_first(windows_);
        chunk_ = next_ = 0;
    }
    std::int64_t next_eval_chunk(std::int64_t chunk_rows) override {
        chunk_ = next_;
        if (chunk_ >= windows_) return 0;
        const std::int64_t n = std::min(chunk_rows, windows_ - chunk_);
        next_ = chunk_ + n;
        return n;
    }
    std::pair<Tensor, Tensor> upload_eval(std::int64_t r0, std::int64_t n) override {
        if (instruct_) return upload_rows(*weval_, 0, weval_->eval_batch(chunk_ + r0, n));
        const std::int64_t rows = eval_->eval_batch(chunk_ + r0, n);
        return upload_rows(*eval_, 0, rows);
    }
    LossResult eval_loss(const Tensor& logits, const Tensor& targets, std::int64_t, std::int64_t) override {
        const std::int64_t rows = logits.shape()[0];
        if (st_->tp_head()) return st_->tp_loss(logits, targets.reshape({rows * T_}), Tensor(), 1.0f);
        Tensor lv = logits.reshape({rows * T_, V_});
        LossResult r = be_->cross_entropy_inplace(lv, targets.reshape({rows * T_}), false, 1.0f);
        // the evaluator weighs each chunk's loss by its rows * T and divides by windows_ * T: scaled so that the
        // result is the summed loss over the counted targets of all windows evaluated, over their count
        if (instruct_)
            r.loss *= static_cast<double>(windows_ * T_) / static_cast<double>(std::max<std::int64_t>(1, eval_counted_));
        return r;
    }

private:
    // jsonl: rows -> tokenizer -> template -> windows of both splits.
    void load_instructions(Communicator* comm, const WorkloadLog& log) {
        const auto t0 = std::chrono::steady_clock::now();
        InstructRows rows = load_instruct_rows(c_.data);
        source_ = rows.source;
        // the layout the rows were read in, detected from the first row
        const std::vector<std::string> layout_args = {rows.source, instruct_layout_name(rows.layout)};
        log(LogLevel::info,
            rows.json_array ? Message(HR_MSG("run.instruction_layout_array",
                                             "%1: a JSON array of rows in the %2 layout (detected from the first row)"),
                                      layout_args)
                            : Message(HR_MSG("run.instruction_layout",
                                             "%1: one row a line in the %2 layout (detected from the first row)"),
                                      layout_args));
        if (resume_) {
            tokenizer_ = resumed_tokenizer(c_.tokenizer, run_dir_);
        } else {
            const std::string text = rows.all_text();
            tokenizer_ = make_tokenizer(c_.tokenizer, text);
        }
        const Tokenizer& tok = *tokenizer_;
        check_vocabulary(tok);
        template_ = resolve_chat_template(c_.chat_template, tok);
        for (const auto* v : {&rows.train, &rows.validation})
            for (const auto& row : *v) check_chat_roles(template_, row, rows.source);
        train_windows_ = make_token_windows(rows.train, template_, tok, T_, c_.sequences);
        validation_windows_ = make_token_windows(rows.validation, template_, tok, T_, c_.sequences);
        instruct_ = true;
        log(LogLevel::info,
            Message(HR_MSG("run.instructions",
                           "%1: %2 training and %3 validation rows, %4 chat template, %5 sequences: %6 training "
                           "windows of %7 tokens, loss on %8 of %9 tokens (%10 tokenizer); %11 rows cut at the "
                           "sequence length"),
                    {rows.source, std::to_string(rows.train.size()), std::to_string(rows.validation.size()), template_,
                     c_.sequences, std::to_string(train_windows_.windows()), std::to_string(T_),
                     std::to_string(train_windows_.trained_tokens), std::to_string(train_windows_.tokens), tok.kind(),
                     std::to_string(train_windows_.truncated)}));
        (void)t0;
        if (comm) check_same_tokens(*comm, train_windows_.x, validation_windows_.x);
    }
    void check_vocabulary(const Tokenizer& tok) const {
        if (tok.vocab_size() > V_)
            throw InputError(HR_MSG("train.vocab_too_small",
                                    "the %1 tokenizer has %2 tokens but model '%3' has a vocabulary of %4; set the token "
                                    "embedding's and lm_head's vocab_size (and num_classes) to at least %2"),
                             {tok.kind(), std::to_string(tok.vocab_size()), spec_.name, std::to_string(V_)});
    }

    // Rows [r0, r0 + n) of a batcher's windows into the micro-batch buffers.
    template <class B>
    std::pair<Tensor, Tensor> upload_rows(B& tb, std::int64_t r0, std::int64_t n) {
        Tensor xs = st_->x_staging.slice0(0, n), ys = st_->labels.slice0(0, n);
        be_->copy_from_host(tb.x().data() + r0 * T_, xs);
        be_->copy_from_host(tb.y().data() + r0 * T_, ys);
        return {xs, ys};
    }

    const TrainConfig& c_;
    const ResolvedStrategy s_;  // a copy: the workload outlives run()
    bool resume_;
    std::string run_dir_;
    ModelSpec spec_;  // the model with the run's sequence length
    std::int64_t T_ = 0, V_ = 0;
    std::string source_;
    std::shared_ptr<const Tokenizer> tokenizer_;
    std::vector<std::int32_t> train_tokens_, validation_tokens_;
    TrainingState* st_ = nullptr;
    Backend* be_ = nullptr;
    std::unique_ptr<TokenBatcher> train_, eval_;
    // instruction data
    bool instruct_ = false;
    std::string template_;
    TokenWindows train_windows_, validation_windows_;
    std::unique_ptr<WindowBatcher> wtrain_, weval_;
    std::int64_t eval_counted_ = 0;
    std::int64_t windows_ = 0, chunk_ = 0, next_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_token_workload(const TrainConfig& config, const ResolvedStrategy& strategy, bool resume,
                                              const std::string& run_dir) {
    return std::make_unique<TokenWorkload>(config, strategy, resume, run_dir);
}

}  // namespace hr
