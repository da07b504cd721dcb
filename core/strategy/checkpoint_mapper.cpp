#include "strategy/checkpoint_mapper.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "base/error.h"
#include "memory/counting_allocator.h"
#include "strategy/sharding.h"

namespace hr {

namespace {

// What rank_part needs of one process's model of the whole spec: its flat layout and its tensors' names,
// shapes and kinds. A pure function of the spec and the options below; the planner's search builds hundreds
// of training states of one spec, so the last few are kept per thread (plain values: no tensor outlives the
// counting allocator of the model it came from).
struct WholeModelTensor {
    std::string name;
    DType dtype = DType::f32;
    Shape shape;
    std::int64_t numel = 0;
    bool trainable = false, tied = false, frozen = false;
    int layer = -1;
    int quantized_bits = 0;
    std::int64_t quantized_group = 0;
    Shape quantized_shape;
    bool is_buffer() const { return !trainable && !frozen; }
};
struct WholeModelLayout {
    ModelSpec spec;
    Device device;
    DType dtype = DType::f32;
    int lora_rank = 0, lora_targets = 0, lora_base_bits = 0;
    double lora_alpha = 0;
    FlatRemap full;
    std::vector<WholeModelTensor> all;
};

const WholeModelLayout& whole_model_layout(const ModelSpec& full_spec, Backend& backend, const ResolvedStrategy& s) {
    thread_local std::deque<WholeModelLayout> cache;  // most recent first
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->device == backend.device() && it->dtype == s.compute_dtype && it->lora_rank == s.lora_rank &&
            it->lora_alpha == s.lora_alpha && it->lora_targets == s.lora_targets &&
            it->lora_base_bits == s.lora_base_bits && it->spec == full_spec) {
            if (it != cache.begin()) {
                WholeModelLayout hit = std::move(*it);
                cache.erase(it);
                cache.push_front(std::move(hit));
            }
            return cache.front();
        }
    WholeModelLayout w;
    w.spec = full_spec;
    w.device = backend.device();
    w.dtype = s.compute_dtype;
    w.lora_rank = s.lora_rank;
    w.lora_alpha = s.lora_alpha;
    w.lora_targets = s.lora_targets;
    w.lora_base_bits = s.lora_base_bits;
    {
        // one process's model of the whole spec, counted only (no memory): its flat layout is the canonical one
        CountingAllocator counting(backend.device());
        ModelOptions mo;
        mo.batch = 1;
        mo.dtype = s.compute_dtype;
        mo.allocator = &counting;
        mo.dry_run = true;
        mo.lora_rank = s.lora_rank;  // (LoRA: the adapters are the trained tensors, the rest frozen)
        mo.lora_alpha = s.lora_alpha;
        mo.lora_targets = s.lora_targets;
        mo.lora_base_bits = s.lora_base_bits;
        Model whole(full_spec, backend, mo);
        w.full = make_flat_remap(whole);
        for (const NamedTensor& t : whole.state_dict()) {
            WholeModelTensor x;
            x.name = t.name;
            x.dtype = t.tensor.dtype();
            x.shape = t.tensor.shape();
            x.numel = t.tensor.numel();
            x.trainable = t.trainable;
            x.tied = t.tied;
            x.frozen = t.frozen;
            x.layer = t.layer;
            x.quantized_bits = t.quantized_bits;
            x.quantized_group = t.quantized_group;
            x.quantized_shape = t.quantized_shape;
            w.all.push_back(std::move(x));
        }
    }
    cache.push_front(std::move(w));
    if (cache.size() > 4) cache.pop_back();
    return cache.front();
}

void copy_tensor_fields(TensorPlace& p, const std::string& name, DType dtype, const Shape& shape, bool trainable,
                        bool tied, bool frozen, int qbits, std::int64_t qgroup, const Shape& qshape) {
    p.name = name;
    p.dtype = dtype;
    p.full_shape = shape;
    p.trainable = trainable;
    p.tied = tied;
    p.frozen = frozen;
    p.quantized_bits = qbits;
    p.quantized_group = qgroup;
    p.quantized_shape = qshape;
    p.held.whole_numel = shape_numel(shape);
}

}  // namespace

CheckpointMapper CheckpointMapper::whole_model(const Model& model, const ResolvedStrategy& s) {
    CheckpointMapper m;
    m.rank_ = s.rank;
    m.trivial_ = true;
    m.params_sharded_ = s.shard == ShardStage::zero3;
    const FlatRemap remap = make_flat_remap(model);
    m.canonical_numel_ = remap.canonical_numel;
    // the flat state: each unit's content, from this run's place to one process's
    for (const FlatRemap::Run& r : remap.runs) {
        FlatStretch st;
        st.held.whole_numel = r.numel;
        st.run_offset = r.run_offset;
        st.canonical_offset = r.canonical_offset;
        st.numel = r.numel;
        m.stretches_.push_back(st);
    }
    std::size_t k = 0, run = 0;
    // (view, flat offset) of each untied trainable tensor; a view is its storage and byte offset (a dry run's
    // storage holds no memory: no address to compare)
    using ViewKey = std::pair<const void*, std::size_t>;
    const auto key = [](const Tensor& t) { return ViewKey{t.storage().get(), t.byte_offset()}; };
    std::vector<std::pair<ViewKey, std::int64_t>> placed;
    const std::vector<NamedTensor> here = model.state_dict();
    for (std::size_t i = 0; i < here.size(); ++i) {
        const NamedTensor& nt = here[i];
        TensorPlace p;
        copy_tensor_fields(p, nt.name, nt.tensor.dtype(), nt.tensor.shape(), nt.trainable, nt.tied, nt.frozen,
                           nt.quantized_bits, nt.quantized_group, nt.quantized_shape);
        p.local = static_cast<int>(i);
        p.numel = nt.tensor.numel();
        if (nt.trainable && !nt.tied) {
            p.run_offset = p.param_offset = remap.tensor_offsets[k++];
            while (run + 1 < remap.runs.size() &&
                   p.run_offset >= remap.runs[run].run_offset + remap.runs[run].numel)
                ++run;
            if (run < remap.runs.size())
                p.canonical_offset = p.run_offset - remap.runs[run].run_offset + remap.runs[run].canonical_offset;
            placed.push_back({key(nt.tensor), p.run_offset});
        }
        if (nt.tied)  // a tied head: the token embedding's weight (the same view; the model's first), from its place
            for (const auto& [view, off] : placed)
                if (view == key(nt.tensor)) {
                    p.param_offset = off;
                    break;
                }
        m.places_.push_back(std::move(p));
    }
    return m;
}

CheckpointMapper CheckpointMapper::rank_part(const Model& model, const ModelSpec& full_spec, Backend& backend,
                                             const ResolvedStrategy& s, const TpHeadSlice& slice,
                                             const PipelineSplit& split) {
    CheckpointMapper m;
    m.rank_ = s.rank;
    m.trivial_ = false;
    m.params_sharded_ = false;  // (rank_layout admits ZeRO-1 alone inside a layout: the engine's, of the state)
    m.slice_ = slice;
    const int D = s.data_world();
    const bool pipelined = s.pipeline > 1;
    if (s.tp_head > 1) {  // part r's rows: rank (last stage x T + r) x D (its first replica)
        const int first = (s.pipeline - 1) * s.tp_head * D;
        for (int r = 0; r < slice.ranks; ++r) m.row_holders_.push_back(first + r * D);
    }
    const WholeModelLayout& whole = whole_model_layout(full_spec, backend, s);
    const FlatRemap& full = whole.full;
    const FlatRemap mine = make_flat_remap(model);
    m.canonical_numel_ = full.canonical_numel;
    const std::vector<WholeModelTensor>& all = whole.all;
    const std::vector<NamedTensor> here = model.state_dict();
    // this rank's tensors by name (the last of a name, as a scan would find it): one lookup per tensor, not a
    // scan of them all (quadratic in the layers)
    std::unordered_map<std::string, std::size_t> here_by_name;
    here_by_name.reserve(here.size());
    for (std::size_t i = 0; i < here.size(); ++i) here_by_name[here[i].name] = i;
    // where each stage's nodes start (the whole model's depth-first indices)
    std::vector<int> node_first;
    if (pipelined) node_first = pipeline_node_offsets(full_spec, split);
    // a split head is the last layer: its node is the last one depth-first
    const int head_layer = all.empty() ? -1 : all.back().layer;
    std::size_t k_all = 0, k_here = 0;  // indices into the flat remaps' tensor offsets
    const bool tied_head = pipelined && pipeline_has_tied_head(full_spec);
    std::int64_t embedding_offset = -1;
    for (const WholeModelTensor& t : all) {
        TensorPlace e;
        copy_tensor_fields(e, t.name, t.dtype, t.shape, t.trainable, t.tied, t.frozen, t.quantized_bits,
                           t.quantized_group, t.quantized_shape);
        if (pipelined) {  // the stage's first replica (rank stage x D)
            int k_of = 0;
            for (int k = 0; k < s.pipeline; ++k)
                if (t.layer >= node_first[static_cast<std::size_t>(k)]) k_of = k;
            e.held.owner = k_of * s.tp_head * D;  // (K x T: the stage's first rank)
        }
        e.head = s.tp_head > 1 && t.layer == head_layer && !t.is_buffer();
        if (e.head && !is_lora_a(t.name)) {
            // a split head's weight and bias, frozen too (LoRA), and its adapter B: by rows. Its adapter A
            // (R, in) is whole on every rank (its gradient is summed over them, TrainingState::optimizer_step)
            e.held.rows = true;
            e.held.per_row = t.numel / slice.total;
        }
        const auto found = here_by_name.find(t.name);
        const NamedTensor* local = found != here_by_name.end() ? &here[found->second] : nullptr;
        if (local) {
            e.local = static_cast<int>(found->second);
            e.numel = local->tensor.numel();
        }
        if ((e.held.owner < 0 || e.held.owner == s.rank) && !local)
            throw Error("internal: tensor " + t.name + " is missing from this rank's model");
        // a tied head: its weight is the token embedding's (node 0); a stage's copy of it has flat room of
        // its own, whose state is the embedding's
        e.embedding = tied_head && t.layer == 0 && t.trainable && !t.tied;
        if (e.embedding) embedding_offset = full.tensor_offsets[k_all];
        if (t.trainable && !t.tied) {
            e.canonical_offset = full.tensor_offsets[k_all++];
            if (local) e.run_offset = mine.tensor_offsets[k_here++];
        } else if (t.tied && local && !local->tied) {
            e.copy = true;  // (frozen under LoRA: values only, restored from the embedding's when need be)
            if (local->trainable) {
                e.canonical_offset = embedding_offset;
                e.run_offset = mine.tensor_offsets[k_here++];
            }
        }
        e.param_offset = e.run_offset;
        if (!e.held.rows && local && e.numel != t.numel)
            throw Error("internal: tensor " + t.name + " differs from the whole model's");
        if (e.canonical_offset >= 0) {  // its stretch of the flat state
            FlatStretch st;
            st.held = e.held;
            st.run_offset = e.run_offset;
            st.canonical_offset = e.canonical_offset;
            st.numel = e.numel;
            st.here_offset = e.held.rows ? slice.first * e.held.per_row : 0;
            st.written = !e.copy;
            m.stretches_.push_back(st);
        }
        m.places_.push_back(std::move(e));
    }
    if (k_here != mine.tensor_offsets.size()) throw Error("internal: this rank's tensors are not the whole model's");
    // every tensor of this rank's model is a place of the whole model's, once
    std::vector<int> covered(here.size(), 0);
    for (const TensorPlace& p : m.places_)
        if (p.local >= 0) ++covered[static_cast<std::size_t>(p.local)];
    for (std::size_t i = 0; i < here.size(); ++i)
        if (covered[i] != 1) throw Error("internal: tensor " + here[i].name + " is not the whole model's");
    return m;
}

std::vector<CheckpointResumeTensor> CheckpointMapper::resume_tensors(const std::vector<StateBuffer>& buffers) const {
    std::vector<CheckpointResumeTensor> out;
    for (const StateBuffer& b : buffers) out.push_back({b.name, b.tensor.dtype(), {canonical_numel_}});
    return out;
}

std::vector<CheckpointTensor> CheckpointMapper::tensors(const std::vector<StateBuffer>& buffers) const {
    std::vector<CheckpointTensor> out;
    for (const TensorPlace& p : places_) out.push_back({"model." + p.name, p.dtype, p.full_shape, true, p.tied});
    for (const CheckpointResumeTensor& r : resume_tensors(buffers)) out.push_back({r.name, r.dtype, r.shape, false, false});
    return out;
}

std::vector<std::uint8_t> CheckpointMapper::gather_held(ShardEngine& run, const Holding& held, const std::uint8_t* mine,
                                                        std::size_t es, bool everywhere) const {
    const bool root = rank_ == 0 || everywhere;
    const std::size_t bytes = static_cast<std::size_t>(held.whole_numel) * es;
    std::vector<std::uint8_t> out;
    if (held.rows) {  // every part's rows, from its holder
        const std::size_t per_row = static_cast<std::size_t>(held.per_row) * es;
        if (root) out.assign(bytes, 0);
        std::vector<std::uint8_t> rows;
        for (int r = 0; r < slice_.ranks; ++r) {
            const std::size_t n = static_cast<std::size_t>(slice_.count_of(r)) * per_row;
            const std::size_t at = static_cast<std::size_t>(slice_.first_of(r)) * per_row;
            const int holder = row_holders_[static_cast<std::size_t>(r)];
            if (holder == 0 && !everywhere) {  // part 0's rows are on rank 0 already
                if (root) std::memcpy(out.data() + at, mine, n);
                continue;
            }
            if (holder == rank_) rows.assign(mine, mine + n);
            else rows.assign(n, 0);
            run.broadcast_bytes(rows.data(), n, holder);
            if (root) std::memcpy(out.data() + at, rows.data(), n);
        }
        return out;
    }
    if (held.owner < 0 || (held.owner == 0 && !everywhere)) {  // every rank's (the same), or rank 0's for rank 0
        if (root) out.assign(mine, mine + bytes);
        return out;
    }
    std::vector<std::uint8_t> buf(bytes, 0);
    if (rank_ == held.owner) std::memcpy(buf.data(), mine, bytes);
    run.broadcast_bytes(buf.data(), bytes, held.owner);
    if (root) out = std::move(buf);
    return out;
}

namespace {
// this rank's flat buffer of a state buffer: the run's flat layout (P elements), or the buffer's own size
std::size_t state_flat_bytes(const Model& model, const StateBuffer& b) {
    return std::max(static_cast<std::size_t>(model.flat_numel()) * dtype_size(b.tensor.dtype()), b.tensor.nbytes());
}
}  // namespace

std::vector<CheckpointHostTensor> CheckpointMapper::gather(CheckpointIo& io) const {
    std::vector<CheckpointHostTensor> out;
    gather(io, [&](const std::string& name, DType dtype, const Shape& shape, const std::uint8_t* bytes, std::size_t n) {
        if (out.empty() || out.back().name != name) out.push_back({name, dtype, shape, {}});
        out.back().data.insert(out.back().data.end(), bytes, bytes + n);
    });
    return out;
}

void CheckpointMapper::gather(CheckpointIo& io, const Sink& sink) const {
    const bool root = rank_ == 0;
    // zero3: the parameters gathered from the shards into this run's flat layout, on rank 0
    std::vector<std::uint8_t> params;
    if (params_sharded_) {
        if (root) params.assign(static_cast<std::size_t>(io.model.flat_numel()) * dtype_size(io.model.options().dtype), 0);
        io.run.gather_parameters(root ? params.data() : nullptr);
    }
    const std::vector<NamedTensor> here = io.model.state_dict();
    for (const TensorPlace& p : places_) {
        const std::size_t es = dtype_size(p.dtype);
        std::vector<std::uint8_t> mine;
        const bool sends = p.held.rows || p.held.owner == rank_;
        if (p.local >= 0) {
            const NamedTensor& nt = here[static_cast<std::size_t>(p.local)];
            if (params_sharded_ && nt.trainable && p.param_offset < 0)
                throw Error("internal: no flat place for checkpoint tensor " + nt.name);
            if (params_sharded_ && nt.trainable) {
                if (root)
                    mine.assign(params.data() + static_cast<std::size_t>(p.param_offset) * es,
                                params.data() + static_cast<std::size_t>(p.param_offset) * es + nt.tensor.nbytes());
            } else if (root || sends) {
                mine.resize(nt.tensor.nbytes());
                io.device.copy_to_host(nt.tensor, mine.data());
            }
        }
        const std::vector<std::uint8_t> whole = gather_held(io.run, p.held, mine.empty() ? nullptr : mine.data(), es, false);
        if (root) sink("model." + p.name, p.dtype, p.full_shape, whole.data(), whole.size());
    }
    params.clear();
    params.shrink_to_fit();
    // master copy and optimizer state: this rank's flat buffer (the shards gathered by their engine), its
    // stretches into one process's layout. The written stretches in one process's order: when they tile its
    // buffer (they do but for a layout that skips some), each goes to the sink as it comes, else through a
    // whole copy of the buffer.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < stretches_.size(); ++i)
        if (stretches_[i].written) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return stretches_[a].canonical_offset < stretches_[b].canonical_offset;
    });
    std::int64_t at = 0;
    bool tiles = true;
    for (const std::size_t i : order) {
        tiles = tiles && stretches_[i].canonical_offset == at;
        at += stretches_[i].held.whole_numel;
    }
    tiles = tiles && at == canonical_numel_;
    // (every rank's buffer whole and alike, its stretches tiling one process's: each read from the buffer itself)
    const bool direct = trivial_ && tiles && io.state.layout().stage < ShardStage::zero1;
    std::vector<std::uint8_t> piece;
    for (const StateBuffer& b : io.buffers) {
        const std::size_t es = dtype_size(b.tensor.dtype());
        const Shape shape{canonical_numel_};
        if (direct) {
            for (const std::size_t i : order) {
                const FlatStretch& st = stretches_[i];
                if (!root) continue;
                piece.resize(static_cast<std::size_t>(st.held.whole_numel) * es);
                b.holder->copy_to_host(b.tensor.view(st.run_offset, {st.held.whole_numel}), piece.data());
                sink(b.name, b.tensor.dtype(), shape, piece.data(), piece.size());
            }
            continue;
        }
        const bool keeps = root || !trivial_;  // (a layout: every rank may send a stretch)
        std::vector<std::uint8_t> flat;
        if (keeps) flat.assign(state_flat_bytes(io.model, b), 0);
        io.state.gather_state(b.tensor, *b.holder, keeps ? flat.data() : nullptr);
        std::vector<std::uint8_t> canonical;
        if (root && !tiles) canonical.assign(static_cast<std::size_t>(canonical_numel_) * es, 0);
        for (const std::size_t i : order) {
            const FlatStretch& st = stretches_[i];
            const std::uint8_t* src =
                keeps && st.run_offset >= 0 ? flat.data() + static_cast<std::size_t>(st.run_offset) * es : nullptr;
            const std::vector<std::uint8_t> whole = gather_held(io.run, st.held, src, es, false);
            if (!root) continue;
            if (tiles) sink(b.name, b.tensor.dtype(), shape, whole.data(), whole.size());
            else std::memcpy(canonical.data() + static_cast<std::size_t>(st.canonical_offset) * es, whole.data(), whole.size());
        }
        if (root && !tiles) sink(b.name, b.tensor.dtype(), shape, canonical.data(), canonical.size());
    }
}

void CheckpointMapper::restore(CheckpointIo& io, const std::function<const std::uint8_t*(const std::string&)>& data,
                               const std::function<bool(const StateBuffer&)>& missing) const {
    std::vector<NamedTensor> here = io.model.state_dict();
    std::vector<std::uint8_t> params;  // zero3: the parameters in this run's flat layout, then its shards
    if (params_sharded_)
        params.assign(static_cast<std::size_t>(io.model.flat_numel()) * dtype_size(io.model.options().dtype), 0);
    for (const TensorPlace& p : places_) {
        if (p.local < 0) continue;
        NamedTensor& nt = here[static_cast<std::size_t>(p.local)];
        if (nt.tied) continue;  // the token embedding's weight, restored under its own name
        const std::uint8_t* src = data("model." + p.name);
        if (!src && p.copy)  // a tied head's copy: the embedding's values
            for (const TensorPlace& e : places_)
                if (e.embedding) src = data("model." + e.name);
        if (!src) throw Error("internal: checkpoint tensor model." + p.name + " missing after the checks");
        const std::size_t es = dtype_size(nt.tensor.dtype());
        if (p.held.rows) src += static_cast<std::size_t>(slice_.first * p.held.per_row) * es;  // this rank's rows
        if (params_sharded_ && nt.trainable)
            std::memcpy(params.data() + static_cast<std::size_t>(p.param_offset) * es, src, nt.tensor.nbytes());
        else
            io.device.copy_from_host(src, nt.tensor);
    }
    if (params_sharded_) io.run.load_parameters(params.data());
    for (StateBuffer& b : io.buffers) {
        const std::uint8_t* src = data(b.name);
        if (!src && missing(b)) continue;
        if (!src) throw Error("internal: checkpoint tensor " + b.name + " missing after the checks");
        const std::size_t es = dtype_size(b.tensor.dtype());
        std::vector<std::uint8_t> flat(state_flat_bytes(io.model, b), 0);
        for (const FlatStretch& st : stretches_) {
            if (st.run_offset < 0) continue;
            std::memcpy(flat.data() + static_cast<std::size_t>(st.run_offset) * es,
                        src + static_cast<std::size_t>(st.canonical_offset + st.here_offset) * es,
                        static_cast<std::size_t>(st.numel) * es);
        }
        io.state.scatter_state(flat.data(), b.tensor, *b.holder);  // this rank's part (its shard under ZeRO)
    }
}

std::vector<NamedTensor> CheckpointMapper::consolidate(CheckpointIo& io, Allocator& alloc) const {
    // this rank's tensors (zero3: gathered whole into a flat buffer from alloc); the others' parts pass
    // through host memory
    const std::vector<NamedTensor> here = io.run.consolidated_state_dict(alloc);
    std::vector<NamedTensor> out;
    for (const TensorPlace& p : places_) {
        const NamedTensor* local = p.local >= 0 ? &here[static_cast<std::size_t>(p.local)] : nullptr;
        if (local && !p.held.rows) {  // this rank's own, whole
            if (p.held.owner >= 0) {  // a stage's: the others receive it (collective)
                std::vector<std::uint8_t> bytes(local->tensor.nbytes());
                io.device.copy_to_host(local->tensor, bytes.data());
                gather_held(io.run, p.held, bytes.data(), dtype_size(p.dtype), true);
            }
            out.push_back(*local);
            out.back().tied = p.tied;  // (a stage's copy of a tied head is the embedding's weight again)
            continue;
        }
        std::vector<std::uint8_t> mine;
        if (local) {
            mine.resize(local->tensor.nbytes());
            io.device.copy_to_host(local->tensor, mine.data());
        }
        std::vector<std::uint8_t> whole =
            gather_held(io.run, p.held, mine.empty() ? nullptr : mine.data(), dtype_size(p.dtype), true);
        NamedTensor nt;
        nt.name = p.name;
        nt.trainable = p.trainable;
        nt.tied = p.tied;
        nt.quantized_bits = p.quantized_bits;
        nt.quantized_group = p.quantized_group;
        nt.quantized_shape = p.quantized_shape;
        nt.tensor = Tensor::empty(alloc, p.full_shape, p.dtype, MemCategory::communication);
        io.device.copy_from_host(whole.data(), nt.tensor);
        out.push_back(nt);
    }
    return out;
}

}  // namespace hr
