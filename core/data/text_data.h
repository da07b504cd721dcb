#pragma once
// Text data for language models: the corpus, its train/validation split, and batches of token windows.
//
// Specs:
//   text:fortunes  Debian's fortunes package: every fortune file of $HEADROOM_DATA_DIR/fortunes, then
//                  /usr/share/games/fortunes (sorted by name; the .dat indexes and the .u8 links are
//                  skipped), about 2.5 MB. Fortunes are the texts between the lines holding a single "%";
//                  overstriking (X backspace Y, how the files mark bold and underline) is reduced to the
//                  visible character, and the fortunes are joined with one blank line between them.
//                  Split: every tenth fortune (index 9, 19, ...) goes to validation, the others to training.
//   text:FILE      any UTF-8 text file: the first 90% for training, the rest for validation (cut at the
//                  first line break after the 90% mark, so no line is split).
//
// Batches (TokenBatcher): a training batch is `batch` windows of seq + 1 consecutive tokens at random
// starts (x = the first seq, y = the same shifted by one); window r of step s starts at
// splitmix64(seed, s, r) mod (tokens - seq), so a run is reproducible and a resumed run continues the
// same stream. An epoch is floor(training tokens / (batch x seq)) steps. Evaluation reads the validation
// tokens as consecutive non-overlapping windows, the first `eval_tokens / seq` of them (all with 0).
// Several ranks: rank r's batcher holds only its rows [first_row, + rows) of every global batch of
// `global_rows` windows, and window r of step s is the same window one process draws (the epoch is the
// global batch's), so N ranks train on exactly the windows of one process.
// Memory: a batcher's two host buffers (x and y, rows x seq i64) are recorded in the ledger as data.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/tokenizer.h"

namespace hr {

class MemoryLedger;

bool is_text_data(const std::string& spec);   // "text:..."
// Data a language model trains on: text (text:...) or instruction rows (jsonl:..., data/instruct_data.h).
bool is_token_data(const std::string& spec);

struct TextCorpus {
    std::string spec;             // "text:fortunes"
    std::string source;           // the folder or file read
    std::string train_text;       // the training split
    std::string validation_text;  // the validation split
    std::int64_t documents = 0;   // fortunes read (0 for a file)
    std::string all_text() const { return train_text + validation_text; }
};

// Reads and splits the corpus; InputError saying what was searched and what to do when it is missing
// or not text.
TextCorpus load_text_corpus(const std::string& spec);
// The tokenizer a run builds for a corpus (data/tokenizer.h make_tokenizer): char learns every character of
// the whole text (so the validation split encodes), bpe:N its pieces from the training split, byte nothing.
std::unique_ptr<Tokenizer> corpus_tokenizer(const std::string& spec, const TextCorpus& corpus);
// Cheap check for UIs: whether the spec can be read and from where (never throws).
DatasetInfo probe_text_data(const std::string& spec);

// The bytes one batcher records for `rows` windows of `seq` tokens (what the planner predicts).
std::size_t text_batch_bytes(std::int64_t rows, std::int64_t seq);

class TokenBatcher {
public:
    // rows: windows this batcher holds per batch; first_row / global_rows: where they start in the global
    // batch and its size (several ranks; 0: the batch is this batcher's rows). InputError when the tokens
    // are fewer than seq + 1.
    TokenBatcher(const std::vector<std::int32_t>& tokens, std::int64_t rows, std::int64_t seq, std::uint64_t seed,
                 MemoryLedger* ledger, const std::string& what, std::int64_t first_row = 0,
                 std::int64_t global_rows = 0);
    ~TokenBatcher();
    TokenBatcher(const TokenBatcher&) = delete;
    TokenBatcher& operator=(const TokenBatcher&) = delete;

    std::int64_t rows() const { return rows_; }
    std::int64_t seq() const { return seq_; }
    std::int64_t steps_per_epoch() const;  // of the global batch
    // Fills x and y with this batcher's rows of the random windows of training step `step` (global rows
    // [first_row, + rows)); returns the rows filled (rows()).
    std::int64_t random_batch(std::int64_t step);
    // Consecutive windows for evaluation: how many there are within max_tokens (0: all), and batch b of them.
    std::int64_t eval_windows(std::int64_t max_tokens) const;
    std::int64_t eval_batch(std::int64_t first_window, std::int64_t windows);
    const std::vector<std::int64_t>& x() const { return x_; }  // (rows, seq)
    const std::vector<std::int64_t>& y() const { return y_; }

private:
    const std::vector<std::int32_t>& tokens_;
    std::int64_t rows_, seq_;
    std::uint64_t seed_;
    std::int64_t first_row_, global_rows_;
    MemoryLedger* ledger_;
    std::uint64_t ledger_id_ = 0;
    std::vector<std::int64_t> x_, y_;
};

}  // namespace hr
