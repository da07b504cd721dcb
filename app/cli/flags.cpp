// The flag table of the `headroom` command line and its parser.
//
// To add a flag: add one row to kFlags below, in the group it belongs to:
//
//     {FlagGroup::device, "ranks", "N", QT_TRANSLATE_NOOP("Cli", "processes to train with (default 1)"),
//      [](CliRequest& r, const FlagValue& v) { r.config.ranks = v.integer<int>(1, 4096); }},
//
// name without dashes; value the placeholder shown in --help (nullptr: a switch, whose apply ignores v);
// help ends with the default in parentheses. Read the value with v.integer<T>(min, max), v.real(...),
// v.bytes(), v.choice(noun, {...}) or v.str(): they check the whole text and the range and throw a
// BadFlag naming the flag, so apply only stores. Flags that exclude each other go into kExclusive.
// Every subcommand whose groups include the flag's group takes it; to give a flag to another
// subcommand, give that subcommand the group (cli.cpp), or start a new group (flags.h, kGroupTitles).
// To add a subcommand: one entry in cli.cpp's table (name, help, groups, positional arguments, run).
#include "cli/flags.h"
#include "cli/output.h"

#include <QRegularExpression>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QUrl>

#include <charconv>
#include <filesystem>
#include <cmath>
#include <map>

#include "base/error.h"
#include "data/tokenizer.h"
#include "io/hf_folder.h"
#include "nn/compression.h"
#include "nn/hf_config.h"
#include "nn/model_spec.h"
#include "notify/webhook_notifier.h"
#include "plan/planner.h"
#include "train/config.h"
#include "train/resume.h"
#include "session/RunDefaults.h"
#include "session/RunText.h"

namespace hrapp {

namespace {

// Steps and batch sizes take core's bounds (hr::kMaxSteps, hr::kMaxBatch in train/config.h, which
// validate_train_config checks too), so a flag accepts exactly what a run accepts.

struct Flag {
    FlagGroup group;
    const char* name;
    const char* value;  // nullptr: a switch
    const char* help;
    void (*apply)(CliRequest&, const FlagValue&);
};

using R = CliRequest;
using V = FlagValue;

const std::vector<Flag> kFlags = {
    // ---- model
    {FlagGroup::model, "preset", "NAME", QT_TRANSLATE_NOOP("Cli", "built-in model: seed-cnn, mlp, lenet5, resnet-mini, vit-tiny, resnet20\n"
                              "(CIFAR-10), tabular-mlp (tables), gpt-tiny, gpt-char, gpt2-124m ... gpt2-1.5b,\n"
                              "llama-tiny, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b, llama-3.1-70b, qwen2.5-7b,\n"
                              "mistral-7b "
                              "(see headroom presets), drawn for the data's samples and classes (default:\n"
                              "the data's, tabular-mlp for a table, gpt-tiny for text, else seed-cnn); a\n"
                              "language model, resnet20 and tabular-mlp bring their own training settings\n"
                              "(headroom presets shows them), which the other flags override"),
     [](R& r, const V& v) { r.preset = v.str(); }},
    {FlagGroup::model, "model", "FILE.json", QT_TRANSLATE_NOOP("Cli", "a model spec (docs/model-spec.md)"),
     [](R& r, const V& v) { r.modelFile = v.str(); }},
    {FlagGroup::model, "model-config", "FILE", QT_TRANSLATE_NOOP("Cli", "a Hugging Face config.json, or the folder that holds it:\n"
                              "LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM, built for --seq\n"
                              "tokens (default 2048); trains with gpt-tiny's settings unless flags say\n"
                              "otherwise (docs/transformers.md, \"Hugging Face models\")"),
     [](R& r, const V& v) { r.modelConfig = v.str(); }},
    // ---- data
    {FlagGroup::data, "data", "SPEC", QT_TRANSLATE_NOOP("Cli", "fashion-mnist (default), mnist, idx:DIR, synthetic, cifar10, cifar10:DIR,\n"
                              "csv:FILE or tsv:FILE (a table, with --target); for language models\n"
                              "text:fortunes or text:FILE (UTF-8), or instruction rows jsonl:FILE\n"
                              "({\"prompt\", \"completion\"}, {\"messages\": [...]}, Alpaca's {\"instruction\",\n"
                              "\"input\", \"output\"} or ShareGPT's {\"conversations\": [...]}, a row a line\n"
                              "or one .json array)"),
     [](R& r, const V& v) { r.config.data = v.str(); }},
    {FlagGroup::data, "target", "COLUMN", QT_TRANSLATE_NOOP("Cli", "a table's class column, by name or number from 1 (csv:/tsv: data)"),
     [](R& r, const V& v) { r.config.target = v.str(); }},
    {FlagGroup::data, "train-limit", "N", QT_TRANSLATE_NOOP("Cli", "use only the first N training samples (default 0: all)"),
     [](R& r, const V& v) { r.config.train_limit = v.integer<std::int64_t>(0); }},
    {FlagGroup::data, "test-limit", "N", QT_TRANSLATE_NOOP("Cli", "use only the first N test samples (default 0: all)"),
     [](R& r, const V& v) { r.config.test_limit = v.integer<std::int64_t>(0); }},
    // ---- length
    {FlagGroup::length, "epochs", "N", QT_TRANSLATE_NOOP("Cli", "passes over the training set (default 1)"),
     [](R& r, const V& v) { r.config.epochs = v.integer<int>(1, 100000); }},
    {FlagGroup::length, "steps", "N", QT_TRANSLATE_NOOP("Cli", "train exactly N steps instead (evaluates at the end)"),
     [](R& r, const V& v) { r.config.steps = v.integer<std::int64_t>(1, hr::kMaxSteps); }},
    // ---- batch and memory strategies
    {FlagGroup::memory, "batch", "N", QT_TRANSLATE_NOOP("Cli", "samples per optimizer step (default 64)"),
     [](R& r, const V& v) { r.config.batch = v.integer<std::int64_t>(1, hr::kMaxBatch); }},
    {FlagGroup::memory, "precision", "P",
     QT_TRANSLATE_NOOP("Cli", "fp32 (default), tf32, bf16, fp16 (mixed precision, f32 master weights;\n"
                              "fp16 with dynamic loss scaling)"),
     [](R& r, const V& v) { r.config.strategy.precision = v.choice(QT_TRANSLATE_NOOP("Cli", "precision"), {"fp32", "tf32", "bf16", "fp16"}); }},
    {FlagGroup::memory, "checkpoint", "C", QT_TRANSLATE_NOOP("Cli", "activation checkpointing: none (default), all, every:K, list:I,J, auto,\n"
                              "attention (transformers: recompute only the attention core)"),
     [](R& r, const V& v) { r.config.strategy.checkpoint = v.str(); }},
    {FlagGroup::memory, "micro-batch", "N", QT_TRANSLATE_NOOP("Cli", "forward/backward N samples at a time, accumulating gradients"),
     [](R& r, const V& v) { r.config.strategy.micro_batch = v.integer<std::int64_t>(1, hr::kMaxBatch); }},
    {FlagGroup::memory, "accumulate", "N", QT_TRANSLATE_NOOP("Cli", "or: split each batch into N micro-batches"),
     [](R& r, const V& v) { r.config.strategy.accumulate = v.integer<std::int64_t>(1, hr::kMaxBatch); }},
    {FlagGroup::memory, "offload-optimizer", nullptr, QT_TRANSLATE_NOOP("Cli", "optimizer state and master weights in host memory"),
     [](R& r, const V&) { r.config.strategy.offload_optimizer = true; }},
    {FlagGroup::memory, "offload-params", nullptr, QT_TRANSLATE_NOOP("Cli", "parameters and gradients in host memory too, each unit brought\n"
                              "to the device one unit ahead (ZeRO-Infinity; needs --shard zero3)"),
     [](R& r, const V&) { r.config.strategy.offload_parameters = true; }},
    {FlagGroup::memory, "lora", "R", QT_TRANSLATE_NOOP("Cli", "LoRA: train rank-R adapters on every linear layer and transformer\n"
                              "projection, the rest of the model frozen (no gradients or optimizer state\n"
                              "for it); with --init-from, a trained model is fine-tuned; the test\n"
                              "accuracy before training is reported"),
     [](R& r, const V& v) { r.config.strategy.lora_rank = v.integer<int>(1, 4096); }},
    {FlagGroup::memory, "lora-alpha", "A", QT_TRANSLATE_NOOP("Cli", "LoRA scale alpha / R (default: alpha = R)"),
     [](R& r, const V& v) { r.config.strategy.lora_alpha = v.real(0.0, 1e6); }},
    {FlagGroup::memory, "lora-dropout", "P", QT_TRANSLATE_NOOP("Cli", "with --lora: drop each adapter's input with probability P while\n"
                              "training, peft's lora_dropout (default: 0, none)"),
     [](R& r, const V& v) { r.config.strategy.lora_dropout = v.real(0.0, 1.0, false, true); }},
    {FlagGroup::memory, "lora-targets", "LIST", QT_TRANSLATE_NOOP("Cli", "with --lora on a LLaMA-family model: the projections that get adapters,\n"
                              "by peft's names q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj\n"
                              "(default: q_proj,v_proj, peft's for the family)"),
     [](R& r, const V& v) { r.config.strategy.lora_targets = v.str(); }},
    {FlagGroup::memory, "quantize-base", "Q", QT_TRANSLATE_NOOP("Cli", "QLoRA: with --lora, keep the frozen weights of the adapted\n"
                              "projections in int8 (a scale per row), int4 (a scale per 64 values) or\n"
                              "nf4 (QLoRA's 4-bit NormalFloat, its scales quantised too) while the\n"
                              "adapters train; each is dequantised when a layer uses it"),
     [](R& r, const V& v) { r.config.strategy.quantize_base = v.choice(QT_TRANSLATE_NOOP("Cli", "base quantisation"), {"none", "int8", "int4", "nf4"}); }},
    {FlagGroup::memory, "memory-limit", "SIZE", QT_TRANSLATE_NOOP("Cli", "cap the device memory (e.g. 4GiB, 512MiB), like a smaller card"),
     [](R& r, const V& v) { r.config.memory_limit = v.bytes(); }},
    // ---- optimizer
    {FlagGroup::optimizer, "optimizer", "NAME", QT_TRANSLATE_NOOP("Cli", "sgd (default), adam, adamw"),
     [](R& r, const V& v) {
         // another kind than the preset's starts from that kind's own settings; the flags below refine them
         const std::string kind = v.choice(QT_TRANSLATE_NOOP("Cli", "optimizer"), {"sgd", "adam", "adamw"});
         if (kind != r.config.optimizer.kind) r.config.optimizer = defaultOptimizer(kind);
     }},
    {FlagGroup::optimizer, "momentum", "F", QT_TRANSLATE_NOOP("Cli", "SGD momentum in [0, 1) (default 0.9, as in the window)"),
     [](R& r, const V& v) { r.config.optimizer.momentum = v.real(0, 1, false, true); }},
    // ---- learning rate, schedule, regularisation
    {FlagGroup::training, "lr", "F", QT_TRANSLATE_NOOP("Cli", "learning rate (default 0.01 for sgd, 0.001 for adam/adamw)"),
     [](R& r, const V& v) { r.config.optimizer.lr = v.real(0, std::numeric_limits<double>::infinity(), true); }},
    {FlagGroup::training, "nesterov", nullptr, QT_TRANSLATE_NOOP("Cli", "SGD with Nesterov momentum"),
     [](R& r, const V&) { r.config.optimizer.nesterov = true; }},
    {FlagGroup::training, "weight-decay", "F", QT_TRANSLATE_NOOP("Cli", "L2 (sgd, adam) or decoupled (adamw) weight decay (default 0)"),
     [](R& r, const V& v) { r.config.optimizer.weight_decay = v.real(0); }},
    {FlagGroup::training, "schedule", "KIND", QT_TRANSLATE_NOOP("Cli", "learning rate schedule: constant (default), step, cosine"),
     [](R& r, const V& v) { r.config.schedule.kind = v.choice(QT_TRANSLATE_NOOP("Cli", "schedule"), {"constant", "step", "cosine"}); }},
    {FlagGroup::training, "warmup", "N", QT_TRANSLATE_NOOP("Cli", "linear warm-up steps (default 0)"),
     [](R& r, const V& v) { r.config.schedule.warmup_steps = v.integer<std::int64_t>(0, hr::kMaxSteps); }},
    {FlagGroup::training, "step-size", "N", QT_TRANSLATE_NOOP("Cli", "step schedule: steps between decays (default 1000)"),
     [](R& r, const V& v) { r.config.schedule.step_size = v.integer<std::int64_t>(1, hr::kMaxSteps); }},
    {FlagGroup::training, "gamma", "F", QT_TRANSLATE_NOOP("Cli", "step schedule: decay factor in (0, 1] (default 0.1)"),
     [](R& r, const V& v) { r.config.schedule.gamma = v.real(0, 1, true, false); }},
    {FlagGroup::training, "min-lr", "F", QT_TRANSLATE_NOOP("Cli", "cosine schedule: final learning rate (default 0)"),
     [](R& r, const V& v) { r.config.schedule.min_lr = v.real(0); }},
    {FlagGroup::training, "label-smoothing", "F", QT_TRANSLATE_NOOP("Cli", "cross-entropy label smoothing in [0, 1) (default: the model's)"),
     [](R& r, const V& v) { r.labelSmoothing = v.real(0, 1, false, true); }},
    // ---- language models: optimizer details (lmcli, issue 12)
    {FlagGroup::training, "grad-clip", "F", QT_TRANSLATE_NOOP("Cli", "clip the gradients' global L2 norm to F (default 0: off)"),
     [](R& r, const V& v) { r.config.optimizer.grad_clip = v.real(0, 1e30); }},
    {FlagGroup::training, "beta1", "F", QT_TRANSLATE_NOOP("Cli", "adam/adamw beta1 in [0, 1) (default 0.9)"),
     [](R& r, const V& v) { r.config.optimizer.beta1 = v.real(0, 1, false, true); }},
    {FlagGroup::training, "beta2", "F", QT_TRANSLATE_NOOP("Cli", "adam/adamw beta2 in [0, 1) (default 0.999)"),
     [](R& r, const V& v) { r.config.optimizer.beta2 = v.real(0, 1, false, true); }},
    {FlagGroup::training, "eps", "F", QT_TRANSLATE_NOOP("Cli", "adam/adamw epsilon, greater than 0 (default 1e-8)"),
     [](R& r, const V& v) { r.config.optimizer.eps = v.real(0, 1, true, false); }},
    {FlagGroup::training, "decay-scope", "S",
     QT_TRANSLATE_NOOP("Cli", "what weight decay applies to: auto (default: matrices for transformers,\n"
                              "else all), all, matrices (weights and embeddings, not biases or norms)"),
     [](R& r, const V& v) { r.config.optimizer.decay_scope = v.choice(QT_TRANSLATE_NOOP("Cli", "decay scope"), {"auto", "all", "matrices"}); }},
    // ---- language models: sequence (train, plan) and text (train)
    {FlagGroup::sequence, "seq", "T", QT_TRANSLATE_NOOP("Cli", "tokens per sequence, 1 to the model's positions (default 0: the model's)"),
     [](R& r, const V& v) { r.config.seq = v.integer<std::int64_t>(0, 1 << 24); }},
    {FlagGroup::tokens, "tokenizer", "K",
     QT_TRANSLATE_NOOP("Cli", "byte (default), char, bpe:N (SentencePiece BPE of N tokens, 260 to\n"
                              "1000000, trained on the training text; stored next to the weights), or a\n"
                              "model's tokenizer.json / tokenizer.model file (or the folder holding it)"),
     [](R& r, const V& v) {
         const std::string s = v.str();
         if (s != "byte" && s != "char") {
             if (s.rfind("bpe:", 0) == 0) {
                 (void)FlagValue(v.flag(), v.text().mid(4)).integer<std::int64_t>(260, 1000000);
             } else if (hr::tokenizer_spec_file(s).empty()) {
                 throw BadFlag{Cli::tr("unknown tokenizer '%1' for %2; use byte, char, bpe:N, or a tokenizer.json or "
                                       "tokenizer.model file (or a folder holding one)")
                                   .arg(v.text(), v.flag())};
             }
         }
         r.config.tokenizer = s;
     }},
    {FlagGroup::tokens, "chat-template", "T",
     QT_TRANSLATE_NOOP("Cli", "instruction data (jsonl:FILE): auto (default: from the tokenizer's special\n"
                              "tokens), plain, llama3, chatml (Qwen) or mistral"),
     [](R& r, const V& v) {
         r.config.chat_template = v.choice(QT_TRANSLATE_NOOP("Cli", "chat template"), {"auto", "plain", "llama3", "chatml", "mistral"});
     }},
    {FlagGroup::tokens, "sequences", "L",
     QT_TRANSLATE_NOOP("Cli", "instruction data: pad (default: one row a sequence, padded or cut) or pack\n"
                              "(the rows joined and cut into sequences)"),
     [](R& r, const V& v) { r.config.sequences = v.choice(QT_TRANSLATE_NOOP("Cli", "sequence layout"), {"pad", "pack"}); }},
    {FlagGroup::text, "eval-every", "N", QT_TRANSLATE_NOOP("Cli", "evaluate every N steps: test loss and accuracy, a language model's validation loss (default 0: at the end of each epoch)"),
     [](R& r, const V& v) { r.config.eval_every = v.integer<std::int64_t>(0, hr::kMaxSteps); }},
    {FlagGroup::tokens, "eval-tokens", "N", QT_TRANSLATE_NOOP("Cli", "validation tokens per evaluation (default 65536; 0: the whole split)"),
     [](R& r, const V& v) { r.config.eval_tokens = v.integer<std::int64_t>(0, std::int64_t(1) << 40); }},
    // ---- device
    {FlagGroup::device, "device", "DEV",
     QT_TRANSLATE_NOOP("Cli", "auto (default: the GPU when one works, else the CPU), cpu, cuda:N"),
     [](R& r, const V& v) { r.config.device = v.str(); }},
    {FlagGroup::device, "threads", "N", QT_TRANSLATE_NOOP("Cli", "CPU threads, 0 to 1024 (default 0: all cores)"),
     [](R& r, const V& v) { r.config.threads = v.integer<int>(0, 1024); }},
    // ---- several ranks (issue 10, docs/distributed.md)
    {FlagGroup::device, "ranks", "N",
     QT_TRANSLATE_NOOP("Cli", "train on N processes of this machine, launched through mpirun (default 1);\n"
                              "plan: predict each of N ranks without the devices"),
     [](R& r, const V& v) { r.ranks = v.integer<int>(1, 4096); }},
    {FlagGroup::device, "shard", "STAGE",
     QT_TRANSLATE_NOOP("Cli", "sharding over the ranks: none (default), dp, zero1, zero2, zero3"),
     [](R& r, const V& v) {
         r.config.strategy.shard = v.choice(QT_TRANSLATE_NOOP("Cli", "sharding stage"), {"none", "dp", "zero1", "zero2", "zero3"});
     }},
    {FlagGroup::device, "rank-batch", "B,B,...",
     QT_TRANSLATE_NOOP("Cli", "samples of each rank per step, adding up to --batch (default: an even split)"),
     [](R& r, const V& v) {
         r.config.strategy.rank_batch.clear();
         for (const QString& part : v.text().split(QLatin1Char(',')))
             r.config.strategy.rank_batch.push_back(FlagValue(v.flag(), part.trimmed()).integer<std::int64_t>(1, hr::kMaxBatch));
     }},
    {FlagGroup::device, "tp-head", "N",
     QT_TRANSLATE_NOOP("Cli", "split the last layer's output columns over N ranks (tensor-parallel head; the body\n"
                              "runs whole on every rank; --ranks N, or N x D with --shard dp or zero1 for D\n"
                              "data-parallel replicas of it; with --pipeline K: --ranks K x N, the last stage's\n"
                              "head split; default 1: off)"),
     [](R& r, const V& v) { r.config.strategy.tp_head = v.integer<int>(1, 4096); }},
    {FlagGroup::device, "pipeline", "K",
     QT_TRANSLATE_NOOP("Cli", "pipeline parallel: the layers in K stages of consecutive layers, one per rank\n"
                              "(--ranks K, or K x D with --shard dp or zero1 for D data-parallel replicas; micro-batches\n"
                              "from --accumulate or --micro-batch run in the 1F1B order; default 1: off)"),
     [](R& r, const V& v) { r.config.strategy.pipeline = v.integer<int>(1, 4096); }},
    {FlagGroup::device, "pipeline-split", "N,N,...",
     QT_TRANSLATE_NOOP("Cli", "top-level layers of each pipeline stage, e.g. 5,3 for a bigger first card\n"
                              "(default: balanced by estimated time; headroom plan shows both balances)"),
     [](R& r, const V& v) {
         r.config.strategy.pipeline_split.clear();
         for (const QString& part : v.text().split(QLatin1Char(',')))
             r.config.strategy.pipeline_split.push_back(FlagValue(v.flag(), part.trimmed()).integer<int>(1, 1 << 20));
     }},
    {FlagGroup::device, "rank-timeout", "SECONDS",
     QT_TRANSLATE_NOOP("Cli", "several ranks: end the run when a rank makes no progress this long (default 300)"),
     [](R& r, const V& v) { r.config.rank_timeout = v.real(1, 1e6); }},
    {FlagGroup::device, "hosts", "HOST[:SLOTS],...",
     QT_TRANSLATE_NOOP("Cli", "several ranks: start them on these machines (mpirun --host: rank 0 on the first;\n"
                              "SLOTS ranks on a machine, default 1); the ranks talk over the network and send\n"
                              "their events to this process (docs/distributed.md, \"Several hosts\")"),
     [](R& r, const V& v) {
         const QStringList hosts = v.text().split(QLatin1Char(','));
         for (const QString& h : hosts) {
             static const QRegularExpression ok(QStringLiteral("^[A-Za-z0-9._\\-\\[\\]]+(:[0-9]{1,4})?$"));
             if (!ok.match(h).hasMatch())
                 throw BadFlag{Cli::tr("%1: '%2' is not HOST or HOST:SLOTS (names or addresses, separated by commas)")
                                   .arg(v.flag(), h)};
         }
         r.hosts = v.text();
     }},
    // ---- run
    {FlagGroup::run, "seed", "N", QT_TRANSLATE_NOOP("Cli", "seed for initialisation, shuffling and dropout (default 1)"),
     [](R& r, const V& v) { r.config.seed = v.integer<std::uint64_t>(0); }},
    {FlagGroup::run, "out", "DIR", QT_TRANSLATE_NOOP("Cli", "output folder (default runs/run-YYYYMMDD-HHMMSS)"),
     [](R& r, const V& v) { r.out = v.text(); }},
    {FlagGroup::run, "name", "NAME", QT_TRANSLATE_NOOP("Cli", "name of the run in the history (default: model on data)"),
     [](R& r, const V& v) { r.name = v.text(); }},
    {FlagGroup::run, "no-history", nullptr, QT_TRANSLATE_NOOP("Cli", "do not record the run in the history"),
     [](R& r, const V&) { r.noHistory = true; }},
    {FlagGroup::run, "notify", "URL|FORMAT:URL|settings",
     QT_TRANSLATE_NOOP("Cli", "send a webhook message when the run ends: to URL (format from the host:\n"
                              "WeCom, DingTalk, Feishu/Lark, Slack, else generic JSON), FORMAT:URL with\n"
                              "FORMAT one of generic, wecom, dingtalk, feishu, slack, or 'settings' for the\n"
                              "webhook saved in the window's Preferences"),
     [](R& r, const V& v) {
         QString error;
         if (!parseNotifyTarget(v.text(), nullptr, &error)) throw BadFlag{QStringLiteral("%1: %2").arg(v.flag(), error)};
         r.notify = v.text();
     }},
    {FlagGroup::run, "quiet", nullptr, QT_TRANSLATE_NOOP("Cli", "only the final line"),
     [](R& r, const V&) { r.quiet = true; }},
    {FlagGroup::run, "pause-file", "FILE",
     QT_TRANSLATE_NOOP("Cli", "pause between steps while FILE exists (create it to pause, remove it to go on);\n"
                              "several ranks: rank 0 watches it and every rank pauses after the same step"),
     [](R& r, const V& v) { r.pauseFile = v.text(); }},
    // ---- run: checkpoints, resume, weights in (issue 13)
    {FlagGroup::run, "save-every", "N|Nm",
     QT_TRANSLATE_NOOP("Cli", "write a checkpoint into the run folder every N steps, or every N minutes\n"
                              "(Nm; Ns seconds), and at the end; the last two are kept (default 10m)"),
     [](R& r, const V& v) {
         try {
             hr::parse_save_every(v.str(), r.config.save_every_steps, r.config.save_every_seconds);
         } catch (const hr::Error& e) {
             throw BadFlag{messageText(e.message())};
         }
     }},
    {FlagGroup::run, "resume", "DIR",
     QT_TRANSLATE_NOOP("Cli", "continue the run in DIR from its newest checkpoint, with its own configuration;\n"
                              "only --steps/--epochs (the new total), --threads, --device, --save-every, --ranks, --shard,\n"
                              "--tp-head, --pipeline, --pipeline-split and --offload-params may change\n"
                              "(or give them in --config FILE, the continued configuration as a whole)"),
     [](R& r, const V& v) { r.resume = v.text(); }},
    // ---- run: a whole configuration (the window's multi-rank runs, issue 10)
    {FlagGroup::run, "config", "FILE.json",
     QT_TRANSLATE_NOOP("Cli", "train with the whole configuration in FILE (a run folder's config.json);\n"
                              "only --ranks, --out, --name, --db, --no-history, --quiet, --notify and --pause-file may be added"),
     [](R& r, const V& v) { r.configFile = v.text(); }},
    {FlagGroup::run, "init-from", "FILE.safetensors",
     QT_TRANSLATE_NOOP("Cli", "start from these weights (Headroom's or PyTorch's names, DDP's module. prefix,\n"
                              "or matched by order and shape, printed as a table); or a Hugging Face model\n"
                              "folder, a peft adapter folder, or a Headroom run folder (its model.safetensors;\n"
                              "a LoRA run's: its adapters on their base model)"),
     [](R& r, const V& v) {
         // a run folder of Headroom's without adapters: the weights it wrote (a LoRA run's folder is also a
         // peft adapter folder, read as one)
         const std::string path = v.str();
         r.config.init_from = hr::is_headroom_run_folder(path) && !hr::is_peft_adapter_folder(path)
                                  ? (std::filesystem::path(path) / "model.safetensors").string()
                                  : path;
     }},
    {FlagGroup::run, "init-base", "DIR",
     QT_TRANSLATE_NOOP("Cli", "with --init-from a peft adapter folder: its base model's folder, when the adapter's\n"
                              "base_model_name_or_path is a hub name or a path not on this machine"),
     [](R& r, const V& v) { r.config.init_base = v.str(); }},
    {FlagGroup::weights, "weights", "FILE.safetensors",
     QT_TRANSLATE_NOOP("Cli", "the weights to evaluate (Headroom's or PyTorch's names, DDP's module. prefix,\n"
                              "or matched by order and shape)"),
     [](R& r, const V& v) { r.weights = v.text(); }},
    {FlagGroup::whatif, "prune", "S",
     QT_TRANSLATE_NOOP("Cli", "what-if: the test accuracy again with the fraction S of each weight tensor's smallest\n"
                              "values set to zero (magnitude pruning, 0 to 0.99; the weights file is not changed)"),
     [](R& r, const V& v) { r.config.what_if.prune = v.real(0, 0.99); }},
    {FlagGroup::whatif, "quantize", "Q",
     QT_TRANSLATE_NOOP("Cli", "what-if: the test accuracy again with the weight tensors stored as int8 (a scale per\n"
                              "output row), int4 (a scale per 64 values) or nf4 (4-bit NormalFloat, a scale per\n"
                              "64 values, the scales quantised too); the weights file is not changed"),
     [](R& r, const V& v) {
         r.config.what_if.bits = hr::quantize_bits(v.choice(QT_TRANSLATE_NOOP("Cli", "quantisation"), {"int8", "int4", "nf4"}));
     }},
    // ---- export
    {FlagGroup::exporting, "hf", "DIR", QT_TRANSLATE_NOOP("Cli", "write a Hugging Face model folder: config.json, model.safetensors\n"
                              "(LoRA adapters merged), the tokenizer file"),
     [](R& r, const V& v) { r.exportHf = v.text(); }},
    {FlagGroup::exporting, "onnx", "FILE", QT_TRANSLATE_NOOP("Cli", "write an image or table model as an ONNX file (opset 17, the\n"
                              "input's normalisation in the graph; with --prune/--quantize the\n"
                              "what-if's weights)"),
     [](R& r, const V& v) { r.exportOnnx = v.text(); }},
    {FlagGroup::exporting, "peft", "DIR", QT_TRANSLATE_NOOP("Cli", "or: write a LoRA run's adapters as peft's adapter folder\n"
                              "(adapter_config.json, adapter_model.safetensors)"),
     [](R& r, const V& v) { r.exportPeft = v.text(); }},
    {FlagGroup::exporting, "shard-size", "SIZE", QT_TRANSLATE_NOOP("Cli", "split the weights into shards of at most SIZE, with\n"
                              "model.safetensors.index.json (default 5GB, as transformers)"),
     [](R& r, const V& v) { r.shardBytes = v.bytes(); }},
    {FlagGroup::exporting, "gguf", "FILE", QT_TRANSLATE_NOOP("Cli", "or: write one GGUF file for llama.cpp, Ollama and LM Studio (the\n"
                              "tokenizer and chat template inside; LoRA adapters merged)"),
     [](R& r, const V& v) { r.exportGguf = v.text(); }},
    {FlagGroup::exporting, "type", "T", QT_TRANSLATE_NOOP("Cli", "the GGUF file's weight type: f32, f16, bf16 or q8_0 (default f16;\n"
                              "1-D tensors f32, q8_0 rows not a multiple of 32 f16)"),
     [](R& r, const V& v) { r.ggufType = QString::fromStdString(v.choice(QT_TRANSLATE_NOOP("Cli", "GGUF type"), {"f32", "f16", "bf16", "q8_0"})); }},
    {FlagGroup::exporting, "ollama", nullptr, QT_TRANSLATE_NOOP("Cli", "with --gguf: an Ollama Modelfile beside the file (FROM, the chat\n"
                              "template in Ollama's syntax, PARAMETER stop); then: ollama create NAME"),
     [](R& r, const V&) { r.ollama = true; }},
    // ---- history
    {FlagGroup::history, "db", "FILE", QT_TRANSLATE_NOOP("Cli", "run history database (default: the user's data folder)"),
     [](R& r, const V& v) { r.db = v.text(); }},
    // ---- plan
    {FlagGroup::plan, "budget", "SIZE|device",
     QT_TRANSLATE_NOOP("Cli", "search for the best configuration within SIZE (4GiB, 512MiB, ...)\n"
                              "or the device's free memory"),
     [](R& r, const V& v) {
         if (v.text() != QLatin1String("device")) (void)v.bytes();
         r.budget = v.text();
     }},
    {FlagGroup::plan, "json", nullptr, QT_TRANSLATE_NOOP("Cli", "machine-readable output"),
     [](R& r, const V&) { r.json = true; }},
    {FlagGroup::plan, "all", nullptr,
     QT_TRANSLATE_NOOP("Cli", "with --budget: every candidate, not only the front of memory against speed"),
     [](R& r, const V&) { r.all = true; }},
    // ---- one step's memory timeline (issue 47, docs/timeline.md)
    {FlagGroup::timeline, "timeline", nullptr,
     QT_TRANSLATE_NOOP("Cli", "print one step's memory over its phases and the peak in one sentence\n"
                              "(plan: predicted; train: measured in the chosen step)"),
     [](R& r, const V&) { r.timeline = true; }},
    {FlagGroup::timeline, "trace", "FILE.json",
     QT_TRANSLATE_NOOP("Cli", "write that timeline as Chrome Trace Event JSON (Perfetto, chrome://tracing)"),
     [](R& r, const V& v) { r.trace = v.text(); }},
    {FlagGroup::timeline, "timeline-step", "N",
     QT_TRANSLATE_NOOP("Cli", "train: the step whose timeline is recorded (default 0: the first steady\n"
                              "one, the second)"),
     [](R& r, const V& v) { r.config.timeline_step = v.integer<std::int64_t>(0, hr::kMaxSteps); }},
    // ---- report
    {FlagGroup::report, "format", "FORMAT", QT_TRANSLATE_NOOP("Cli", "html, pdf, json or csv (default: from --out's extension, else html)"),
     [](R& r, const V& v) { r.format = q(v.choice(QT_TRANSLATE_NOOP("Cli", "format"), {"html", "pdf", "json", "csv"})); }},
    {FlagGroup::report, "out", "FILE", QT_TRANSLATE_NOOP("Cli", "the report file (default ./headroom-run-ID.EXT)"),
     [](R& r, const V& v) { r.out = v.text(); }},
    // ---- runs
    {FlagGroup::runs, "status", "S[,S...]", QT_TRANSLATE_NOOP("Cli", "only runs with these statuses: running, finished, failed, stopped"),
     [](R& r, const V& v) {
         r.statuses.clear();
         for (const QString& s : v.text().split(QLatin1Char(','), Qt::SkipEmptyParts))
             r.statuses << q(FlagValue(v.flag(), s.trimmed().toLower())
                                 .choice(QT_TRANSLATE_NOOP("Cli", "status"), {"running", "finished", "failed", "stopped"}));
         if (r.statuses.isEmpty()) (void)v.choice(QT_TRANSLATE_NOOP("Cli", "status"), {"running", "finished", "failed", "stopped"});
     }},
    {FlagGroup::runs, "filter", "TEXT", QT_TRANSLATE_NOOP("Cli", "only runs whose name, model, data or device contains TEXT"),
     [](R& r, const V& v) { r.filter = v.text(); }},
    {FlagGroup::runs, "limit", "N", QT_TRANSLATE_NOOP("Cli", "at most N runs, newest first (default 0: all)"),
     [](R& r, const V& v) { r.limit = v.integer<int>(0); }},
    // ---- generate (lmcli, issue 12)
    {FlagGroup::generate, "run", "RUN", QT_TRANSLATE_NOOP("Cli", "a run: its id, 'last', its name (see headroom runs) or its folder"),
     [](R& r, const V& v) { r.run = v.text(); }},
    {FlagGroup::generate, "weights", "FILE", QT_TRANSLATE_NOOP("Cli", "or: a model.safetensors file (its tokenizer from the same folder)"),
     [](R& r, const V& v) { r.weights = v.text(); }},
    {FlagGroup::generate, "prompt", "TEXT", QT_TRANSLATE_NOOP("Cli", "the text to continue (default: start after a newline)"),
     [](R& r, const V& v) { r.prompt = v.text(); }},
    {FlagGroup::generate, "tokens", "N", QT_TRANSLATE_NOOP("Cli", "new tokens to generate, 1 to 100000 (default 200)"),
     [](R& r, const V& v) { r.tokens = v.integer<std::int64_t>(1, 100000); }},
    {FlagGroup::generate, "temperature", "X", QT_TRANSLATE_NOOP("Cli", "sampling temperature, 0 to 100 (default 0.8; 0: greedy, deterministic)"),
     [](R& r, const V& v) { r.temperature = v.real(0, 100); }},
    {FlagGroup::generate, "top-k", "K", QT_TRANSLATE_NOOP("Cli", "sample among the K most likely tokens only (default 0: all)"),
     [](R& r, const V& v) { r.topK = v.integer<int>(0, 1 << 24); }},
    {FlagGroup::generate, "seed", "N", QT_TRANSLATE_NOOP("Cli", "seed of the sampling (default 1)"),
     [](R& r, const V& v) { r.seed = v.integer<std::uint64_t>(0); }},
    {FlagGroup::generate, "threads", "N", QT_TRANSLATE_NOOP("Cli", "CPU threads, 0 to 1024 (default 0: all cores)"),
     [](R& r, const V& v) { r.threads = v.integer<int>(0, 1024); }},
    {FlagGroup::generate, "no-kv-cache", nullptr,
     QT_TRANSLATE_NOOP("Cli", "re-run the model over the whole context for every token instead of keeping keys and values (slower; the same tokens)"),
     [](R& r, const V&) { r.noKvCache = true; }},
    {FlagGroup::generate, "as-exported", "T",
     QT_TRANSLATE_NOOP("Cli", "compute on the weights as headroom export --gguf --type T stores them (f32, f16, bf16\n"
                              "or q8_0; a LoRA run merged): what the exported file will say"),
     [](R& r, const V& v) { r.asExported = QString::fromStdString(v.choice(QT_TRANSLATE_NOOP("Cli", "GGUF type"), {"f32", "f16", "bf16", "q8_0"})); }},
    {FlagGroup::generate, "ids", nullptr,
     QT_TRANSLATE_NOOP("Cli", "also print the prompt's and the generated token ids (two lines on stderr)"),
     [](R& r, const V&) { r.showIds = true; }},
    {FlagGroup::generate, "before", nullptr,
     QT_TRANSLATE_NOOP("Cli", "with --run: the model the run started from (a LoRA run's adapters switched off, else its\n"
                              "--init-from weights or step-0 checkpoint), to compare with the trained one"),
     [](R& r, const V&) { r.before = true; }},
    // ---- presets
    {FlagGroup::presets, "json", nullptr, QT_TRANSLATE_NOOP("Cli", "print the preset NAME's model spec as JSON"),
     [](R& r, const V&) { r.json = true; }},
};

// Flags that exclude each other, in every spelling (--epochs=3 --steps 5 as well).
const std::vector<std::pair<const char*, const char*>> kExclusive = {{"epochs", "steps"}, {"preset", "model"}, {"run", "weights"},
                                                                     {"preset", "model-config"}, {"model", "model-config"}};

const std::map<FlagGroup, const char*> kGroupTitles = {
    {FlagGroup::model, QT_TRANSLATE_NOOP("Cli", "Model (one of)")},
    {FlagGroup::data, QT_TRANSLATE_NOOP("Cli", "Data")},
    {FlagGroup::length, QT_TRANSLATE_NOOP("Cli", "Length")},
    {FlagGroup::memory, QT_TRANSLATE_NOOP("Cli", "Batch and memory strategies (see headroom plan)")},
    {FlagGroup::optimizer, QT_TRANSLATE_NOOP("Cli", "Optimizer")},
    {FlagGroup::training, QT_TRANSLATE_NOOP("Cli", "Learning rate and regularisation")},
    {FlagGroup::device, QT_TRANSLATE_NOOP("Cli", "Device")},
    {FlagGroup::run, QT_TRANSLATE_NOOP("Cli", "Run")},
    {FlagGroup::history, QT_TRANSLATE_NOOP("Cli", "History")},
    {FlagGroup::plan, QT_TRANSLATE_NOOP("Cli", "Search")},
    {FlagGroup::report, QT_TRANSLATE_NOOP("Cli", "Report")},
    {FlagGroup::runs, QT_TRANSLATE_NOOP("Cli", "Filter")},
    {FlagGroup::presets, QT_TRANSLATE_NOOP("Cli", "Output")},
    {FlagGroup::weights, QT_TRANSLATE_NOOP("Cli", "Weights")},
    {FlagGroup::whatif, QT_TRANSLATE_NOOP("Cli", "Pruned and quantised what-ifs")},
    {FlagGroup::sequence, QT_TRANSLATE_NOOP("Cli", "Language models")},
    {FlagGroup::tokens, QT_TRANSLATE_NOOP("Cli", "Text")},
    {FlagGroup::text, QT_TRANSLATE_NOOP("Cli", "Evaluation")},
    {FlagGroup::generate, QT_TRANSLATE_NOOP("Cli", "Generation")},
    {FlagGroup::timeline, QT_TRANSLATE_NOOP("Cli", "Step timeline (docs/timeline.md)")},
    {FlagGroup::exporting, QT_TRANSLATE_NOOP("Cli", "Export")},
};

std::vector<const Flag*> flagsOf(const Subcommand& cmd) {
    std::vector<const Flag*> out;
    for (FlagGroup g : cmd.groups)
        for (const Flag& f : kFlags)
            if (f.group == g) out.push_back(&f);
    return out;
}

QString dashed(const QString& name) { return QStringLiteral("--") + name; }

QString seeHelp(const Subcommand& cmd) {
    return Cli::tr("see headroom %1 --help").arg(QLatin1String(cmd.name));
}

// The raw spelling of an option on the command line ("--bogus", "-bogus", "--bogus=3" -> "--bogus").
QString rawSpelling(const QStringList& args, const QString& name) {
    for (const QString& a : args) {
        if (a == QLatin1String("--")) break;
        QString key = a.section(QLatin1Char('='), 0, 0);
        if ((key.startsWith(QLatin1String("--")) && key.mid(2) == name) || (key.startsWith(QLatin1Char('-')) && key.mid(1) == name))
            return key;
    }
    return dashed(name);
}

QString numberText(double v) { return QString::number(v, 'g', 12); }

}  // namespace

// ---- FlagValue ----------------------------------------------------------------------------------------

std::int64_t FlagValue::signedIn(std::int64_t min, std::int64_t max) const {
    const QByteArray b = m_text.toUtf8();
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(b.constData(), b.constData() + b.size(), v);
    const bool whole = ec == std::errc() && end == b.constData() + b.size() && !b.isEmpty();
    if (!whole || v < min || v > max) {
        const QString range = max == std::numeric_limits<std::int64_t>::max()
                                  ? Cli::tr("an integer of at least %1").arg(min)
                                  : Cli::tr("an integer from %1 to %2").arg(min).arg(max);
        throw BadFlag{Cli::tr("%1 expects %2, got '%3'").arg(m_flag, range, m_text)};
    }
    return v;
}

std::uint64_t FlagValue::unsignedIn(std::uint64_t min, std::uint64_t max) const {
    const QByteArray b = m_text.toUtf8();
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(b.constData(), b.constData() + b.size(), v);
    const bool whole = ec == std::errc() && end == b.constData() + b.size() && !b.isEmpty();
    if (!whole || v < min || v > max)
        throw BadFlag{Cli::tr("%1 expects %2, got '%3'").arg(m_flag, Cli::tr("an integer from %1 to %2").arg(min).arg(max), m_text)};
    return v;
}

double FlagValue::real(double min, double max, bool minOpen, bool maxOpen) const {
    const QByteArray b = m_text.toUtf8();
    double v = 0;
    // from_chars: the C locale's digits whatever LC_NUMERIC says (strtod would stop at "0.5" in de_DE)
    const auto [end, ec] = std::from_chars(b.constData(), b.constData() + b.size(), v);
    const bool whole = ec == std::errc() && end == b.constData() + b.size() && !b.isEmpty() && std::isfinite(v);
    const bool inRange = (minOpen ? v > min : v >= min) && (maxOpen ? v < max : v <= max);
    if (!whole || !inRange) {
        QString range;
        if (std::isinf(max))
            range = minOpen ? Cli::tr("a number greater than %1").arg(numberText(min)) : Cli::tr("a number of at least %1").arg(numberText(min));
        else
            range = Cli::tr("a number in %1%2, %3%4")
                        .arg(minOpen ? QStringLiteral("(") : QStringLiteral("["))
                        .arg(numberText(min), numberText(max))
                        .arg(maxOpen ? QStringLiteral(")") : QStringLiteral("]"));
        throw BadFlag{Cli::tr("%1 expects %2, got '%3'").arg(m_flag, range, m_text)};
    }
    return v;
}

std::size_t FlagValue::bytes() const {
    try {
        return hr::parse_bytes(str());
    } catch (const hr::Error& e) {
        throw BadFlag{QStringLiteral("%1: %2").arg(m_flag, messageText(e.message()))};
    }
}

std::string FlagValue::choice(const char* noun, const std::vector<std::string>& options) const {
    for (const std::string& o : options)
        if (m_text.toStdString() == o) return o;
    throw BadFlag{Cli::tr("unknown %1 '%2' for %3; use %4").arg(Cli::tr(noun), m_text, m_flag, alternatives(options))};
}

QString alternatives(const std::vector<std::string>& options) {
    if (options.empty()) return {};
    if (options.size() == 1) return q(options.front());
    QStringList head;
    for (std::size_t i = 0; i + 1 < options.size(); ++i) head << q(options[i]);
    return Cli::tr("%1 or %2").arg(head.join(QStringLiteral(", ")), q(options.back()));
}

// ---- parsing ------------------------------------------------------------------------------------------

CliRequest parseCommandLine(const Subcommand& cmd, const QStringList& args) {
    CliRequest r;
    r.command = QLatin1String(cmd.name);
    r.config = defaultTrainConfig();
    const std::vector<const Flag*> flags = flagsOf(cmd);

    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addOption(QCommandLineOption(QStringList{QStringLiteral("h"), QStringLiteral("help")}));
    for (const Flag* f : flags) {
        QCommandLineOption o(QLatin1String(f->name));
        if (f->value) o.setValueName(QLatin1String(f->value));
        parser.addOption(o);
    }
    if (!parser.parse(QStringList{QStringLiteral("headroom")} + args)) {
        const QString command = QLatin1String(cmd.name);
        if (!parser.unknownOptionNames().isEmpty())
            throw BadFlag{Cli::tr("unknown option '%1' for 'headroom %2'; %3")
                              .arg(rawSpelling(args, parser.unknownOptionNames().first()), command, seeHelp(cmd))};
        // Qt's other errors: a value missing after the last option, or a value given to a switch
        int last = static_cast<int>(args.size()) - 1;
        const int dd = static_cast<int>(args.indexOf(QStringLiteral("--")));
        if (dd >= 0) last = dd - 1;
        for (const Flag* f : flags) {
            if (f->value && last >= 0 && (args[last] == dashed(QLatin1String(f->name)) || args[last] == QLatin1Char('-') + QLatin1String(f->name)))
                throw BadFlag{Cli::tr("%1 needs a value (%2)").arg(args[last], seeHelp(cmd))};
            if (!f->value)
                for (const QString& a : args)
                    if (a.startsWith(dashed(QLatin1String(f->name)) + QLatin1Char('=')))
                        throw BadFlag{Cli::tr("%1 takes no value (%2)").arg(dashed(QLatin1String(f->name)), seeHelp(cmd))};
        }
        throw BadFlag{QStringLiteral("%1 (%2)").arg(parser.errorText(), seeHelp(cmd))};
    }
    if (parser.isSet(QStringLiteral("help"))) {
        r.help = true;
        return r;
    }
    // the preset's training settings first (a language model's optimizer, batch, steps, data ...; the same
    // function the window starts from), then every flag over them. With neither --preset nor --model the
    // data decides the preset, by the rule the window follows too (hr::default_preset_for_data): a table
    // trains tabular-mlp, text gpt-tiny, images seed-cnn
    const QStringList given = parser.optionNames();
    // a Hugging Face model (--model-config, or --init-from a model folder with no other model named) trains
    // with a language model's settings (text data, AdamW, ...): gpt-tiny's
    const bool hfModel = given.contains(QStringLiteral("model-config")) ||
                         (!given.contains(QStringLiteral("preset")) && !given.contains(QStringLiteral("model")) &&
                          given.contains(QStringLiteral("init-from")) &&
                          (hr::is_hf_model_folder(parser.value(QStringLiteral("init-from")).toStdString()) ||
                           hr::is_peft_adapter_folder(parser.value(QStringLiteral("init-from")).toStdString())));
    if (hfModel && !given.contains(QStringLiteral("preset")) && !given.contains(QStringLiteral("model"))) {
        r.preset = "gpt-tiny";
        r.config = defaultTrainConfig(r.preset);
    } else if (given.contains(QStringLiteral("preset")) && !given.contains(QStringLiteral("model"))) {
        r.config = defaultTrainConfig(parser.value(QStringLiteral("preset")).toStdString());
    } else if (!given.contains(QStringLiteral("preset")) && !given.contains(QStringLiteral("model"))) {
        const std::string data = given.contains(QStringLiteral("data")) ? parser.value(QStringLiteral("data")).toStdString() : r.config.data;
        r.preset = hr::default_preset_for_data(data);
        r.presetFromData = true;
        r.config = defaultTrainConfig(r.preset);
    }
    for (const Flag* f : flags) {
        const QString name = QLatin1String(f->name);
        if (!parser.isSet(name)) continue;
        const QStringList values = parser.values(name);
        if (f->value ? values.size() > 1 : parser.optionNames().count(name) > 1)
            throw BadFlag{Cli::tr("%1 is given more than once; give it once").arg(dashed(name))};
        r.given.insert(name);
        f->apply(r, FlagValue(dashed(name), f->value ? values.value(0) : QString()));
    }
    for (const auto& [a, b] : kExclusive)
        if (r.has(a) && r.has(b))
            throw BadFlag{Cli::tr("give either --%1 or --%2, not both").arg(QLatin1String(a), QLatin1String(b))};
    r.positional = parser.positionalArguments();
    if (r.positional.size() > cmd.maxPositional)
        throw BadFlag{Cli::tr("unexpected argument '%1' for 'headroom %2'; %3")
                          .arg(r.positional.value(cmd.maxPositional), QLatin1String(cmd.name), seeHelp(cmd))};
    if (r.positional.size() < cmd.minPositional)
        throw BadFlag{Cli::tr("'headroom %1' needs %2; %3")
                          .arg(QLatin1String(cmd.name), QString::fromLatin1(cmd.usage).section(QLatin1Char(' '), 0, 0), seeHelp(cmd))};
    // --epochs over a preset that trains for a number of steps: the epochs count
    if (r.has("epochs") && !r.has("steps")) r.config.steps = 0;
    // a preset's evaluations follow the length given (four a run; at the end of each epoch for --epochs),
    // unless --eval-every says otherwise: the preset's own interval over a longer run evaluated so often
    // that half of gpt-char's time at --steps 1000 --seq 64 went to validation
    if ((r.has("steps") || r.has("epochs")) && !r.has("eval-every") && !r.has("model") &&
        hr::preset_training(r.preset).has_training)
        r.config.eval_every = hr::preset_eval_interval(r.config.steps);
    return r;
}

QString helpText(const Subcommand& cmd) {
    QString out = Cli::tr("Usage: headroom %1 %2\n").arg(QLatin1String(cmd.name), QLatin1String(cmd.usage));
    if (cmd.about && *cmd.about) out += QLatin1Char('\n') + Cli::tr(cmd.about) + QLatin1Char('\n');
    constexpr int kColumn = 28;
    for (FlagGroup g : cmd.groups) {
        out += QLatin1Char('\n') + Cli::tr(kGroupTitles.at(g)) + QStringLiteral(":\n");
        for (const Flag& f : kFlags) {
            if (f.group != g) continue;
            QString left = QStringLiteral("  --") + QLatin1String(f.name);
            if (f.value) left += QLatin1Char(' ') + QLatin1String(f.value);
            const QStringList lines = Cli::tr(f.help).split(QLatin1Char('\n'));
            if (left.size() + 1 > kColumn) out += left + QLatin1Char('\n') + QString(kColumn, QLatin1Char(' '));
            else out += left.leftJustified(kColumn);
            out += lines.first() + QLatin1Char('\n');
            for (int i = 1; i < lines.size(); ++i) out += QString(kColumn, QLatin1Char(' ')) + lines[i] + QLatin1Char('\n');
        }
    }
    out += QStringLiteral("\n  %1%2\n").arg(QStringLiteral("--help").leftJustified(kColumn - 2), Cli::tr("this help"));
    if (cmd.epilog && *cmd.epilog) out += QLatin1Char('\n') + Cli::tr(cmd.epilog) + QLatin1Char('\n');
    return out;
}

QStringList flagNames(const Subcommand& cmd) {
    QStringList out;
    for (const Flag* f : flagsOf(cmd)) out << QLatin1String(f->name);
    return out;
}

const Subcommand* findSubcommand(const QString& name) {
    for (const Subcommand& c : subcommands())
        if (name == QLatin1String(c.name)) return &c;
    return nullptr;
}

}  // namespace hrapp

namespace hrapp {

void resolveModel(CliRequest& r) {
    hr::TrainConfig& c = r.config;
    // --init-from a Hugging Face model folder (or a peft adapter on one) with no model named: its config.json
    std::string hfConfig = r.modelConfig;
    if (hfConfig.empty() && r.modelFile.empty() && !r.has("preset") && !c.init_from.empty()) {
        if (hr::is_hf_model_folder(c.init_from)) hfConfig = c.init_from;
        else if (hr::is_peft_adapter_folder(c.init_from))
            hfConfig = c.init_base.empty() ? hr::read_peft_adapter(c.init_from).base_dir : c.init_base;
    }
    if (!r.modelFile.empty()) {
        c.model = hr::load_model_spec(r.modelFile);
        c.model_source = "file:" + r.modelFile;
    } else if (!hfConfig.empty()) {
        c.model = hr::hf_model_spec(hr::load_hf_config(hfConfig));
        c.model_source = "hf:" + hfConfig;
    } else {
        c.model = hr::preset_model_for_data(r.preset, c);  // drawn for the data's samples and classes
        c.model_source = "preset:" + r.preset;
    }
    if (r.labelSmoothing >= 0) c.model.loss.label_smoothing = r.labelSmoothing;
    // LoRA from a peft adapter: its lora_dropout trains on unless --lora-dropout says otherwise (as
    // PeftModel.from_pretrained(..., is_trainable=True) keeps the adapter's config)
    if (c.strategy.lora_rank > 0 && !r.has("lora-dropout") && !c.init_from.empty() &&
        hr::is_peft_adapter_folder(c.init_from))
        c.strategy.lora_dropout = hr::read_peft_adapter(c.init_from).config.lora_dropout;
}

}  // namespace hrapp
