#pragma once
// Instruction data for language models: `--data jsonl:FILE`, rows in one of four layouts:
//   {"prompt": "...", "completion": "..."}                       (a user turn and the assistant's answer)
//   {"messages": [{"role": "system"|"user"|"assistant", "content": "..."}, ...]}   (at least one assistant)
//   {"instruction": "...", "input": "...", "output": "..."}      (Alpaca; "input" and "system" optional: the
//                                                                  user turn is instruction + "\n" + input)
//   {"conversations": [{"from": "system"|"human"|"gpt", "value": "..."}, ...]}   (ShareGPT; at least one gpt)
// either one JSON object a line (JSONL) or one JSON array of them (a .json file: the text's first character
// is '['). The layout is detected from the first row; Alpaca and ShareGPT files hold that layout only,
// prompt/completion and messages rows may mix (as they always could).
// Blank lines are skipped. A malformed row stops the run before anything is written, with one message
// naming its line (in a JSON array: its element and line) and what is wrong. Every tenth row (index 9, 19, ...) is for validation; a file of fewer
// than ten rows validates on its training rows.
//
// Each row is rendered by a chat template (data/chat_template.h) and tokenized; the loss is taken only on
// the assistant's tokens: a target whose token is not trained is -100 (backend.h kIgnoreTarget), and the
// token workload divides the summed loss by the targets counted in the whole global batch (PyTorch's
// cross_entropy(ignore_index=-100) over that batch).
//
// Sequences (--sequences):
//   pad   each row is one window of seq tokens (x = its first seq tokens, y = the next ones); a longer row
//         is cut (counted in `truncated`), a shorter one padded with id 0 whose targets are -100
//   pack  the rows' tokens one after the other, cut into consecutive windows of seq (attention is not reset
//         at a row's end, as TRL's packing without position ids)
// Training windows are drawn as TokenBatcher draws them (keyed on step and row, data/text_data.h); the
// batch buffers (x and y, i64) are recorded in the ledger as data, text_batch_bytes: the mask lives in y.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/chat_template.h"
#include "data/tokenizer.h"

namespace hr {

class MemoryLedger;

bool is_jsonl_data(const std::string& spec);  // "jsonl:..."
// "pad" or "pack"; InputError otherwise.
void validate_sequence_layout(const std::string& layout);

enum class InstructLayout { prompt_completion, messages, alpaca, sharegpt };
const char* instruct_layout_name(InstructLayout l);  // "prompt/completion", "messages", "Alpaca", "ShareGPT"

struct InstructRow {
    std::int64_t line = 0;                 // 1-based line of the file (a JSON array: where the element starts)
    std::vector<ChatMessage> messages;     // prompt/completion rows: user + assistant
    std::int64_t element = 0;              // a JSON array: the 1-based element (0 in JSONL)
};

struct InstructRows {
    std::string spec, source;
    InstructLayout layout = InstructLayout::prompt_completion;  // the first row's
    bool json_array = false;        // one JSON array rather than a row a line
    std::vector<InstructRow> train, validation;
    bool validation_apart = false;  // validation holds its own rows (ten or more rows), not the training rows
    std::string all_text() const;  // every content (what char and bpe:N tokenizers learn from)
    std::vector<const InstructRow*> file_rows() const;  // each row of the file once, in the file's order
};

// Parses a JSONL text or a JSON array (`where` names it in messages). InputError "line N of FILE: ..." or
// "element K (line N) of FILE: ..." for a malformed row.
InstructRows parse_instruct_data(const std::string& text, const std::string& where);
// Reads and parses jsonl:FILE.
InstructRows load_instruct_rows(const std::string& spec);
// The mistral template's rule (user and assistant alternate, starting with user; system only first).
// InputError naming the row's line otherwise.
void check_chat_roles(const std::string& chat_template, const InstructRow& row, const std::string& where);

// Windows of seq tokens: x and y (targets, -100 where no loss is taken), row-major (windows, seq).
struct TokenWindows {
    std::int64_t seq = 0;
    std::vector<std::int32_t> x, y;
    std::vector<std::int32_t> counted;  // per window: targets not -100
    std::int64_t tokens = 0;            // tokens of the rows
    std::int64_t trained_tokens = 0;    // of them, the ones the loss is taken on
    std::int64_t truncated = 0;         // pad: rows longer than a window (their end is dropped)
    std::int64_t windows() const { return seq > 0 ? static_cast<std::int64_t>(x.size()) / seq : 0; }
};
TokenWindows make_token_windows(const std::vector<InstructRow>& rows, const std::string& chat_template,
                                const Tokenizer& tok, std::int64_t seq, const std::string& layout);

class WindowBatcher {
public:
    // As TokenBatcher (rows, first_row, global_rows); InputError when there are no windows.
    WindowBatcher(const TokenWindows& w, std::int64_t rows, std::uint64_t seed, MemoryLedger* ledger,
                  const std::string& what, std::int64_t first_row = 0, std::int64_t global_rows = 0);
    ~WindowBatcher();
    WindowBatcher(const WindowBatcher&) = delete;
    WindowBatcher& operator=(const WindowBatcher&) = delete;

    std::int64_t rows() const { return rows_; }
    std::int64_t steps_per_epoch() const;
    // Fills this batcher's rows of step `step`; step_counted(): the counted targets of the whole global batch.
    std::int64_t random_batch(std::int64_t step);
    std::int64_t step_counted() const { return step_counted_; }
    // Window of global row `row` at `step` (what random_batch takes).
    std::int64_t window_of(std::int64_t step, std::int64_t row) const;
    std::int64_t eval_windows(std::int64_t max_tokens) const;
    std::int64_t eval_batch(std::int64_t first_window, std::int64_t windows);
    // counted targets of windows [0, n)
    std::int64_t counted_in_first(std::int64_t n) const;
    const std::vector<std::int64_t>& x() const { return x_; }
    const std::vector<std::int64_t>& y() const { return y_; }

private:
    void fill(std::int64_t r, std::int64_t window);
    const TokenWindows& w_;
    std::int64_t rows_, seq_;
    std::uint64_t seed_;
    std::int64_t first_row_, global_rows_;
    MemoryLedger* ledger_;
    std::uint64_t ledger_id_ = 0;
    std::int64_t step_counted_ = 0;
    std::vector<std::int64_t> x_, y_;
};

}  // namespace hr
