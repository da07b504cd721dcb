"""The independent reference for tests/unit/test_model_tokenizers.cpp (issue 46).

usage: tokenizer_reference.py OUT_DIR
Reads OUT_DIR/texts.json (a list of strings). Trains a small byte-level BPE on fortunes with each family's
pre-tokenizer pattern (GPT-2, Llama 3, Qwen2) and writes it as OUT_DIR/FAMILY/tokenizer.json in that
family's layout (added tokens, merges as "a b" or ["a", "b"], ignore_merges for Llama 3); trains a
SentencePiece BPE (OUT_DIR/spm/tokenizer.model). Writes OUT_DIR/ids.json: {family: [[ids of text 0], ...]}
encoded by this file's own implementation of the published algorithm (GPT-2's encoder.py: bytes_to_unicode,
the lowest-ranked pair merged first, all its occurrences left to right; added tokens cut out first,
longest first), with the `regex` module for the patterns; "spm" by sentencepiece itself.
"""
import json, os, sys, regex
out = sys.argv[1]
texts = json.load(open(os.path.join(out, 'texts.json'), encoding='utf-8'))
PATTERNS = {
  'gpt2': r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
  'llama3': r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
  'qwen2': r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
ADDED = {
  'gpt2': ['<|endoftext|>'],
  'llama3': ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'],
  'qwen2': ['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
}

# GPT-2's bytes_to_unicode (openai/gpt-2 encoder.py)
bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('\xa1'), ord('\xac') + 1)) + list(range(ord('\xae'), ord('\xff') + 1))
cs = bs[:]
n = 0
for b in range(256):
    if b not in bs:
        bs.append(b); cs.append(256 + n); n += 1
B2U = dict(zip(bs, map(chr, cs)))

d = '/usr/share/games/fortunes'
corpus = ''
for f in sorted(os.listdir(d)):
    p = os.path.join(d, f)
    if f.endswith('.dat') or f.endswith('.u8') or os.path.islink(p) or not os.path.isfile(p):
        continue
    corpus += open(p, encoding='utf-8', errors='replace').read()
    if len(corpus) > 60000:
        break
corpus = corpus[:60000] + ' naïve café 日本語 über straße 12345'

def train(pattern, merges_n):
    counts = {}
    for w in regex.findall(pattern, corpus):
        k = tuple(B2U[b] for b in w.encode('utf-8'))
        counts[k] = counts.get(k, 0) + 1
    words = [[list(k), c] for k, c in counts.items()]
    vocab = [B2U[b] for b in range(256)]
    seen = set(vocab)
    merges = []
    for _ in range(merges_n):
        pairs = {}
        for syms, c in words:
            for p in zip(syms, syms[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        if best[0] + best[1] not in seen:
            seen.add(best[0] + best[1]); vocab.append(best[0] + best[1])
        for w in words:
            s, i, m = w[0], 0, []
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    m.append(s[i] + s[i + 1]); i += 2
                else:
                    m.append(s[i]); i += 1
            w[0] = m
    return vocab, merges

def encode(text, vocab, ranks, pattern, added, ignore_merges):
    ids = []
    def plain(s):
        for w in regex.findall(pattern, s):
            syms = [B2U[b] for b in w.encode('utf-8')]
            if ignore_merges and ''.join(syms) in vocab:
                ids.append(vocab[''.join(syms)]); continue
            while len(syms) > 1:
                cand = [(ranks[p], p) for p in zip(syms, syms[1:]) if p in ranks]
                if not cand:
                    break
                best = min(cand)[1]
                i, m = 0, []
                while i < len(syms):
                    if i + 1 < len(syms) and (syms[i], syms[i + 1]) == best:
                        m.append(syms[i] + syms[i + 1]); i += 2
                    else:
                        m.append(syms[i]); i += 1
                syms = m
            ids.extend(vocab[s] for s in syms)
    alt = regex.compile('|'.join(regex.escape(t) for t in sorted(added, key=len, reverse=True)))
    pos = 0
    for m in alt.finditer(text):
        plain(text[pos:m.start()]); ids.append(added[m.group()]); pos = m.end()
    plain(text[pos:])
    return ids

result = {}
for fam in ('gpt2', 'llama3', 'qwen2'):
    pattern = PATTERNS[fam]
    vocab_list, merges = train(pattern, 300)
    vocab = {t: i for i, t in enumerate(vocab_list)}
    added = {}
    if fam == 'gpt2':  # <|endoftext|> is the vocabulary's last entry
        vocab['<|endoftext|>'] = len(vocab); added['<|endoftext|>'] = vocab['<|endoftext|>']
    else:  # after the vocabulary, as Llama 3 and Qwen2 number them
        for t in ADDED[fam]:
            added[t] = len(vocab) + len(added)
    ranks = {m: i for i, m in enumerate(merges)}
    byte_level = {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': fam == 'gpt2'}
    pre = byte_level if fam == 'gpt2' else {'type': 'Sequence', 'pretokenizers': [
        {'type': 'Split', 'pattern': {'Regex': pattern}, 'behavior': 'Isolated', 'invert': False}, byte_level]}
    tj = {'version': '1.0', 'truncation': None, 'padding': None,
          'added_tokens': [{'id': i, 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False,
                            'normalized': False, 'special': True} for t, i in added.items()],
          'normalizer': {'type': 'NFC'} if fam == 'qwen2' else None,
          'pre_tokenizer': pre,
          'post_processor': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': False, 'use_regex': True},
          'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
          'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': None,
                    'end_of_word_suffix': None, 'fuse_unk': False, 'byte_fallback': False,
                    'ignore_merges': fam == 'llama3', 'vocab': vocab,
                    'merges': [a + ' ' + b for a, b in merges] if fam == 'gpt2' else [[a, b] for a, b in merges]}}
    os.makedirs(os.path.join(out, fam), exist_ok=True)
    json.dump(tj, open(os.path.join(out, fam, 'tokenizer.json'), 'w', encoding='utf-8'), ensure_ascii=False)
    result[fam] = [encode(t, vocab, ranks, pattern, added, fam == 'llama3') for t in texts]
    result[fam + '_size'] = len(vocab) + (len(added) if fam != 'gpt2' else 0)

import sentencepiece as spm
os.makedirs(os.path.join(out, 'spm'), exist_ok=True)
open(os.path.join(out, 'spm', 'corpus.txt'), 'w', encoding='utf-8').write(corpus)
spm.SentencePieceTrainer.train(input=os.path.join(out, 'spm', 'corpus.txt'), model_prefix=os.path.join(out, 'spm', 'tokenizer'),
                               vocab_size=600, model_type='bpe', byte_fallback=True, character_coverage=1.0,
                               bos_id=1, eos_id=2, unk_id=0, minloglevel=2)
sp = spm.SentencePieceProcessor(model_file=os.path.join(out, 'spm', 'tokenizer.model'))
result['spm'] = [sp.encode(t) for t in texts]
result['spm_size'] = sp.get_piece_size()
result['spm_bos'] = sp.piece_to_id('<s>')
result['spm_eos'] = sp.piece_to_id('</s>')
json.dump(result, open(os.path.join(out, 'ids.json'), 'w'))
