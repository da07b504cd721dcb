#include "strategy/sharding.h"

#include "memory/step_timeline.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace hr {

ShardLayout make_shard_layout(const std::vector<ParamUnit>& units, std::int64_t flat_numel, ShardStage stage,
                              int world_size, int rank, int tied_unit, int tied_head_unit) {
    ShardLayout l;
    if (tied_unit >= static_cast<int>(units.size()) || (tied_unit >= 0 && tied_head_unit < tied_unit))
        throw Error("internal: a head tied to unit " + std::to_string(tied_unit) + " must be in it or a later unit (got " +
                    std::to_string(tied_head_unit) + ")");
    l.tied_unit = tied_unit;
    l.tied_head_unit = tied_unit >= 0 ? tied_head_unit : -1;
    l.stage = stage;
    l.world_size = world_size;
    l.rank = rank;
    l.flat_numel = flat_numel;
    const bool sharded = stage >= ShardStage::zero1;
    std::int64_t shard_at = 0;
    for (std::size_t u = 0; u < units.size(); ++u) {
        const ParamUnit& p = units[u];
        UnitShard s;
        s.unit = static_cast<int>(u);
        s.offset = p.offset;
        s.numel = p.numel;
        s.values = p.values;
        if (sharded && p.numel % world_size != 0)
            throw Error("internal: unit " + std::to_string(u) + " has " + std::to_string(p.numel) +
                        " elements, not a multiple of the world size " + std::to_string(world_size));
        s.shard_numel = sharded ? p.numel / world_size : p.numel;
        s.shard_offset = shard_at;
        s.own_offset = p.offset + (sharded ? rank * s.shard_numel : 0);
        shard_at += s.shard_numel;
        l.values += p.values;
        l.max_unit_numel = std::max(l.max_unit_numel, p.numel);
        if (static_cast<int>(u) != tied_unit) l.rotating_numel = std::max(l.rotating_numel, p.numel);
        l.units.push_back(s);
    }
    // the flat buffer may end past the last unit only by alignment (never when sharded: units tile it)
    l.shard_numel = sharded ? shard_at : flat_numel;
    if (sharded && shard_at * world_size != flat_numel)
        throw Error("internal: the units do not tile the flat buffer (" + std::to_string(shard_at * world_size) +
                    " of " + std::to_string(flat_numel) + " elements)");
    return l;
}

GatherSchedule::GatherSchedule(const ShardLayout& layout)
    : tied_unit_(layout.tied_unit), tied_head_unit_(layout.tied_head_unit) {
    for (const UnitShard& u : layout.units) numel_.push_back(u.numel);
}

std::vector<int> GatherSchedule::need(int now, int next) {
    std::vector<int> out;
    const int n = static_cast<int>(numel_.size());
    // a tied head's unit reads the tied unit's weight too (its own buffer keeps it from its forward on)
    const int also = now == tied_head_unit_ ? tied_unit_ : -1;
    for (int u : {now, next, also}) {
        if (u < 0 || u >= n || numel_[static_cast<std::size_t>(u)] == 0 || holds_[buffer_of(u)] == u) continue;
        holds_[buffer_of(u)] = u;
        out.push_back(u);
    }
    return out;
}

std::vector<int> GatherSchedule::after_update() {
    holds_[0] = holds_[1] = holds_[2] = -1;
    return need(0, 1);
}

namespace {
// zero3: the units the schedule gathers in a steady-state step (it starts right after the previous step's
// update), as elements of the whole units (`shard`: of this rank's shards)
double gathered_elements(const ShardLayout& l, std::int64_t accumulate, bool shard) {
    GatherSchedule g(l);
    const int n = static_cast<int>(l.units.size());
    double gathered = 0;
    auto add = [&](const std::vector<int>& us) {
        for (int u : us) {
            const UnitShard& x = l.units[static_cast<std::size_t>(u)];
            gathered += static_cast<double>(shard ? x.shard_numel : x.numel);
        }
    };
    for (int pass = 0; pass < 2; ++pass) {  // the first step warms the schedule up; count the second
        gathered = 0;
        for (std::int64_t k = 0; k < accumulate; ++k) {
            for (int u = 0; u < n; ++u) add(g.before_forward(u));
            for (int u = n - 1; u >= 0; --u) add(g.before_backward(u));
        }
        add(g.after_update());
    }
    return gathered;
}
}  // namespace

double step_payload_bytes(const ShardLayout& l, std::int64_t accumulate, std::size_t ds) {
    double all = 0;
    for (const UnitShard& u : l.units) all += static_cast<double>(u.numel);
    const double A = static_cast<double>(accumulate), b = static_cast<double>(ds);
    switch (l.stage) {
        case ShardStage::none: return 0;
        case ShardStage::dp: return all * b;                   // one all-reduce of every unit
        case ShardStage::zero1: return 2 * all * b;            // reduce-scatter + all-gather
        case ShardStage::zero2: return (A + 1) * all * b;      // a reduce-scatter per micro-batch + all-gather
        case ShardStage::zero3: break;
    }
    // zero3: a reduce-scatter per micro-batch, and the gathers the schedule issues
    return (A * all + gathered_elements(l, accumulate, false)) * b;
}

double offload_step_bytes(const ShardLayout& l, std::int64_t accumulate, std::size_t ds) {
    if (l.stage != ShardStage::zero3) return 0;
    return (static_cast<double>(accumulate) * static_cast<double>(l.shard_numel) + gathered_elements(l, accumulate, true)) *
           static_cast<double>(ds);
}

void ShardEngine::attach(Model& model, const ResolvedStrategy& s, Communicator* comm, Backend& device,
                         Allocator& alloc, bool dry_run, Backend* host, Allocator* host_alloc) {
    model_ = &model;
    device_ = &device;
    offload_ = s.offload_parameters;
    host_ = host;
    if (offload_ && (s.shard != ShardStage::zero3 || !host || !host_alloc))
        throw Error("internal: parameter offload needs zero3 and the host backend");
    alloc_ = &alloc;
    stage_ = s.shard;
    accumulate_ = s.accumulate;
    dry_run_ = dry_run;
    layout_ = make_shard_layout(model.param_units(), model.flat_numel(), s.shard, s.world_size, s.rank,
                                model.tied_unit(), model.tied_head_unit());
    if (!dry_run) {
        if (comm) {
            if (comm->world_size() != s.world_size || comm->rank() != s.rank)
                throw Error("internal: the strategy is for rank " + std::to_string(s.rank) + " of " +
                            std::to_string(s.world_size) + " but the communicator is rank " +
                            std::to_string(comm->rank()) + " of " + std::to_string(comm->world_size()));
            if (comm->device() != device.device())
                throw Error("internal: a communicator on " + comm->device().str() + " for a model on " +
                            device.device().str());
            comm_ = comm;
        } else if (s.world_size == 1) {
            if (stage_ != ShardStage::none) {
                own_comm_ = make_single_rank_communicator(device);
                comm_ = own_comm_.get();
            }
        } else {
            throw Error("internal: " + std::to_string(s.world_size) + " ranks need a communicator");
        }
    }
    const DType dt = model.options().dtype;
    // the rotating pair is sized for the largest unit that uses it; a tied unit has one of its own
    const std::int64_t U = layout_.rotating_numel, S = layout_.shard_numel;
    const int T = layout_.tied_unit;
    const std::int64_t UT = T >= 0 ? unit(T).numel : 0;
    const bool rotating = U > 0 || T < 0;  // (a tied model of one unit needs no rotating pair)
    const std::size_t n_units = layout_.units.size();
    unit_reduction_.clear();
    unit_reduction_.resize(n_units);
    unit_reduced_.assign(n_units, false);
    // parameter offload: the shards on the host (strategy/sharding.h), the device keeps buckets and gathers
    Allocator& shard_alloc = offload_ ? *host_alloc : alloc;
    if (stage_ >= ShardStage::zero2) {
        grad_shard_ = Tensor::empty(shard_alloc, {S}, dt, MemCategory::gradients);
        if (rotating)
            for (int b = 0; b < 2; ++b) bucket_[b] = Tensor::empty(alloc, {U}, dt, MemCategory::communication);
        if (UT > 0) bucket_[2] = Tensor::empty(alloc, {UT}, dt, MemCategory::communication);
        for (std::size_t u = 0; u < n_units; ++u)
            if (unit(static_cast<int>(u)).numel > 0)
                model.bind_unit(static_cast<int>(u), Tensor(), bucket_[layout_.buffer_of(static_cast<int>(u))]);
    }
    if (stage_ == ShardStage::zero3) {
        param_shard_ = Tensor::empty(shard_alloc, {S}, dt, MemCategory::parameters);
        if (offload_) {
            std::int64_t largest = 0;
            for (const UnitShard& us : layout_.units) largest = std::max(largest, us.shard_numel);
            host_stage_ = Tensor::empty(*host_alloc, {largest}, dt, MemCategory::communication);
        }
        if (rotating)
            for (int b = 0; b < 2; ++b) gather_[b] = Tensor::empty(alloc, {U}, dt, MemCategory::communication);
        if (UT > 0) gather_[2] = Tensor::empty(alloc, {UT}, dt, MemCategory::communication);
        for (std::size_t u = 0; u < n_units; ++u) {
            const UnitShard& us = unit(static_cast<int>(u));
            if (us.numel == 0) continue;
            Tensor& g = gather_[layout_.buffer_of(static_cast<int>(u))];
            model.bind_unit(static_cast<int>(u), g, Tensor());
            if (dry_run) continue;
            // every rank computes the unit's initial weights (seeded per tensor, identical everywhere) and
            // keeps its shard; the buffer is cleared first so the unit's padding is zero
            Tensor region = g.view(0, {us.numel});
            device.fill(region, 0.0);
            model.init_unit_parameters(static_cast<int>(u));
            Tensor own = g.view(s.rank * us.shard_numel, {us.shard_numel});
            Tensor piece = param_shard_.view(us.shard_offset, {us.shard_numel});
            if (offload_)
                device.copy_to_host(own, piece.raw());
            else
                device.copy(own, piece);
        }
    }
    schedule_ = GatherSchedule(layout_);
    small_scratch_ = Tensor();
    if (s.world_size > 1)
        if (const Tensor idle = idle_memory(); !idle.defined() || idle.nbytes() < 4096)
            small_scratch_ = Tensor::empty(alloc, {std::int64_t{1} << 20}, DType::u8, MemCategory::communication);
    if (stage_ == ShardStage::zero3 && !dry_run)  // the last two units initialised are in the buffers
        for (std::size_t u = 0; u < n_units; ++u)
            if (unit(static_cast<int>(u)).numel > 0)
                schedule_.set_holds(layout_.buffer_of(static_cast<int>(u)), static_cast<int>(u));
}

std::vector<Tensor> ShardEngine::pieces_of(const Tensor& buffer) const {
    if (stage_ < ShardStage::zero1) return {buffer};
    std::vector<Tensor> out;
    for (const UnitShard& u : layout_.units)
        if (u.shard_numel > 0) out.push_back(buffer.view(u.shard_offset, {u.shard_numel}));
    return out;
}

std::vector<std::int64_t> ShardEngine::piece_flat_offsets() const {
    if (stage_ < ShardStage::zero1) return {0};
    std::vector<std::int64_t> out;
    for (const UnitShard& u : layout_.units)
        if (u.shard_numel > 0) out.push_back(u.own_offset);
    return out;
}

std::vector<Tensor> ShardEngine::grad_pieces() const {
    if (stage_ < ShardStage::zero1) return {model_->gradients()};
    if (stage_ >= ShardStage::zero2) return pieces_of(grad_shard_);
    std::vector<Tensor> out;
    for (const UnitShard& u : layout_.units)
        if (u.shard_numel > 0) out.push_back(model_->gradients().view(u.own_offset, {u.shard_numel}));
    return out;
}

std::vector<Tensor> ShardEngine::param_pieces() const {
    if (stage_ < ShardStage::zero1) return {model_->parameters()};
    if (stage_ == ShardStage::zero3) return pieces_of(param_shard_);
    std::vector<Tensor> out;
    for (const UnitShard& u : layout_.units)
        if (u.shard_numel > 0) out.push_back(model_->parameters().view(u.own_offset, {u.shard_numel}));
    return out;
}

void ShardEngine::begin_step() {
    if (stage_ >= ShardStage::zero2) {
        pieces_holder().fill(grad_shard_, 0.0);
    } else {
        model_->zero_grad();
    }
    backwards_done_ = 0;
    std::fill(unit_reduced_.begin(), unit_reduced_.end(), false);
}

// dp / zero1: unit u's gradients are complete (the step's last backward passed it): reduce them.
void ShardEngine::launch_unit_reduction(int u) {
    const UnitShard& us = unit(u);
    unit_reduced_[static_cast<std::size_t>(u)] = true;
    if (us.numel == 0 || !comm_) return;
    Tensor g = model_->gradients().view(us.offset, {us.numel});
    if (stage_ == ShardStage::dp) {
        unit_reduction_[static_cast<std::size_t>(u)] = comm_->all_reduce(g, ReduceOp::sum);
    } else {
        Tensor own = model_->gradients().view(us.own_offset, {us.shard_numel});
        unit_reduction_[static_cast<std::size_t>(u)] = comm_->reduce_scatter(g, own, ReduceOp::sum);
    }
}

// zero2 / zero3: bucket b's reduce-scatter is waited and its result added into the gradient shard.
void ShardEngine::finish_bucket(int b) {
    Pending& p = bucket_pending_[b];
    if (p.unit < 0) return;
    p.handle.wait();
    const UnitShard& us = unit(p.unit);
    Tensor reduced = bucket_[b].view(layout_.rank * us.shard_numel, {us.shard_numel});
    Tensor into = grad_shard_.view(us.shard_offset, {us.shard_numel});
    if (offload_) {  // down to the host, added into the host's gradient shard there
        Tensor staged = host_stage_.view(0, {us.shard_numel});
        device_->copy_to_host(reduced, staged.raw());
        host_->axpy(1.0f, staged, into);
        to_host_bytes_ += static_cast<double>(reduced.nbytes());
    } else {
        device_->axpy(1.0f, reduced, into);
    }
    p.unit = -1;
}

void ShardEngine::finish_gradients() {
    if (stage_ == ShardStage::none || dry_run_) return;
    if (stage_ <= ShardStage::zero1) {
        // a step with fewer backward passes than the strategy's (a short last batch) reduces here
        for (std::size_t u = 0; u < unit_reduced_.size(); ++u)
            if (!unit_reduced_[u]) launch_unit_reduction(static_cast<int>(u));
        for (auto& h : unit_reduction_) h.wait();
    } else {
        for (int b = 0; b < 3; ++b) finish_bucket(b);
    }
}

// zero3: issue the schedule's gathers (a buffer's previous gather is waited before it is overwritten; on a
// GPU the new gather also waits, through the compute-stream event, for the unit that used the buffer)
void ShardEngine::start_gathers(const std::vector<int>& units) {
    for (int u : units) {
        const UnitShard& us = unit(u);
        const int b = layout_.buffer_of(u);
        Pending& p = gather_pending_[b];
        if (p.unit >= 0) p.handle.wait();
        Tensor piece = param_shard_.view(us.shard_offset, {us.shard_numel});
        Tensor whole = gather_[b].view(0, {us.numel});
        if (offload_) {  // up from the host into this rank's slice, then gathered in place
            Tensor own = gather_[b].view(layout_.rank * us.shard_numel, {us.shard_numel});
            device_->copy_from_host(piece.raw(), own);
            to_device_bytes_ += static_cast<double>(own.nbytes());
            p.handle = comm_->all_gather(own, whole);
        } else {
            p.handle = comm_->all_gather(piece, whole);
        }
        p.unit = u;
    }
}

void ShardEngine::wait_gathered(int u) {
    Pending& p = gather_pending_[layout_.buffer_of(u)];
    if (p.unit == u) {
        p.handle.wait();
        p.unit = -1;
    }
}

void ShardEngine::publish_parameters() {
    if (dry_run_ || !comm_) return;
    if (stage_ == ShardStage::zero1 || stage_ == ShardStage::zero2) {
        std::vector<CommHandle> hs;
        for (const UnitShard& us : layout_.units) {
            if (us.numel == 0) continue;
            Tensor own = model_->parameters().view(us.own_offset, {us.shard_numel});
            Tensor whole = model_->parameters().view(us.offset, {us.numel});
            hs.push_back(comm_->all_gather(own, whole));
        }
        for (auto& h : hs) h.wait();
    } else if (stage_ == ShardStage::zero3) {
        // the gathered copies are stale now; start gathering the next step's first two units
        if (recorder_) {
            const int held[3] = {schedule_.holds(0), schedule_.holds(1), schedule_.holds(2)};
            const std::vector<int> units = schedule_.after_update();
            for (int b = 0; b < 3; ++b)
                if (held[b] >= 0) recorder_->use(MemCategory::communication, -1, -static_cast<std::int64_t>(unit_bytes(held[b])));
            record_after_update(*recorder_, units);
            start_gathers(units);
        } else {
            start_gathers(schedule_.after_update());
        }
    }
    comm_->check();
}

void ShardEngine::broadcast_buffers() {
    // (no stage on several ranks: a split head's, whose ranks compute the same statistics from the same rows)
    if (dry_run_ || !comm_ || comm_->world_size() == 1 || stage_ == ShardStage::none) return;
    std::vector<CommHandle> hs;
    for (NamedTensor& t : model_->state_dict())
        if (t.is_buffer()) hs.push_back(comm_->broadcast(t.tensor, 0));  // (a frozen base stays as it is)
    for (auto& h : hs) h.wait();
}

std::vector<NamedTensor> ShardEngine::consolidated_state_dict(Allocator& alloc) {
    if (stage_ != ShardStage::zero3) return model_->state_dict();
    Tensor flat = Tensor::empty(alloc, {layout_.flat_numel}, model_->options().dtype, MemCategory::communication);
    std::vector<CommHandle> hs;
    for (const UnitShard& us : layout_.units) {
        if (us.numel == 0) continue;
        Tensor piece = param_shard_.view(us.shard_offset, {us.shard_numel});
        Tensor whole = flat.view(us.offset, {us.numel});
        if (offload_) {
            Tensor own = flat.view(us.own_offset, {us.shard_numel});
            device_->copy_from_host(piece.raw(), own);
            hs.push_back(comm_->all_gather(own, whole));
        } else {
            hs.push_back(comm_->all_gather(piece, whole));
        }
    }
    for (auto& h : hs) h.wait();
    return model_->state_dict_in(flat);
}

void ShardEngine::before_forward(int u) {
    if (!comm_) return;
    comm_->progress();
    if (stage_ == ShardStage::zero3) {
        int held[3] = {schedule_.holds(0), schedule_.holds(1), schedule_.holds(2)};
        const std::vector<int> units = schedule_.before_forward(u);
        if (recorder_) record_gathers(*recorder_, held, units);
        start_gathers(units);
        wait_gathered(u);
        if (u == layout_.tied_head_unit) wait_gathered(layout_.tied_unit);
    }
}

void ShardEngine::after_forward(int) {
    if (comm_) comm_->progress();
}

void ShardEngine::before_backward(int u) {
    if (!comm_) return;
    comm_->progress();
    if (stage_ == ShardStage::zero3) {
        int held[3] = {schedule_.holds(0), schedule_.holds(1), schedule_.holds(2)};
        const std::vector<int> units = schedule_.before_backward(u);
        if (recorder_) record_gathers(*recorder_, held, units);
        start_gathers(units);
        wait_gathered(u);
        if (u == layout_.tied_head_unit) wait_gathered(layout_.tied_unit);
    }
    if (stage_ >= ShardStage::zero2) {
        // a unit's bucket is cleared before the first backward that accumulates into it: the tied unit's
        // at its head's (the head adds dW first), every other unit's at its own
        auto clear = [&](int v) {
            if (unit(v).numel == 0) return;
            const int b = layout_.buffer_of(v);
            finish_bucket(b);  // the reduce-scatter that used the bucket last (unit v + 2's, or the previous micro-batch's)
            Tensor region = bucket_[b].view(0, {unit(v).numel});
            device_->fill(region, 0.0);
        };
        const int T = layout_.tied_unit;
        if (u == layout_.tied_head_unit) clear(T);
        if (u != T) clear(u);
    }
}

void ShardEngine::after_backward(int u) {
    if (!comm_) return;
    const bool last = backwards_done_ + 1 >= accumulate_;
    if (stage_ <= ShardStage::zero1) {
        if (last && stage_ != ShardStage::none) launch_unit_reduction(u);
    } else if (unit(u).numel > 0) {
        const UnitShard& us = unit(u);
        const int b = layout_.buffer_of(u);  // (the tied unit's bucket: after the head's and its own backward)
        Tensor whole = bucket_[b].view(0, {us.numel});
        Tensor own = bucket_[b].view(layout_.rank * us.shard_numel, {us.shard_numel});
        bucket_pending_[b].handle = comm_->reduce_scatter(whole, own, ReduceOp::sum);
        bucket_pending_[b].unit = u;
    }
    if (u == 0) ++backwards_done_;
    comm_->progress();
}

// ---- the step's memory timeline ------------------------------------------------------------------------

std::size_t ShardEngine::unit_bytes(int u) const {
    return static_cast<std::size_t>(unit(u).numel) * dtype_size(model_->options().dtype);
}

void ShardEngine::record_gathers(StepRecorder& r, int held[3], const std::vector<int>& units) const {
    for (int u : units) {
        const int b = layout_.buffer_of(u);
        r.phase(StepPhaseKind::gather, -1, u);
        if (held[b] >= 0) r.use(MemCategory::communication, -1, -static_cast<std::int64_t>(unit_bytes(held[b])));
        r.use(MemCategory::communication, -1, static_cast<std::int64_t>(unit_bytes(u)));
        held[b] = u;
    }
}

void ShardEngine::record_after_update(StepRecorder& r, const std::vector<int>& units) const {
    int none[3] = {-1, -1, -1};
    record_gathers(r, none, units);
}

void ShardEngine::begin_timeline_walk() {
    if (stage_ != ShardStage::zero3 || !dry_run_) return;
    schedule_ = GatherSchedule(layout_);  // a step starts after an update: units 0 and 1 gathered
    schedule_.after_update();
}

void ShardEngine::walk_before_forward(StepRecorder& r, int u) {
    if (stage_ != ShardStage::zero3 || !dry_run_) return;
    int held[3] = {schedule_.holds(0), schedule_.holds(1), schedule_.holds(2)};
    record_gathers(r, held, schedule_.before_forward(u));
}

void ShardEngine::walk_before_backward(StepRecorder& r, int u) {
    if (stage_ != ShardStage::zero3 || !dry_run_) return;
    int held[3] = {schedule_.holds(0), schedule_.holds(1), schedule_.holds(2)};
    record_gathers(r, held, schedule_.before_backward(u));
}

void ShardEngine::walk_after_update(StepRecorder& r) {
    if (stage_ != ShardStage::zero3 || !dry_run_) return;
    for (int b = 0; b < 3; ++b)
        if (schedule_.holds(b) >= 0) r.use(MemCategory::communication, -1, -static_cast<std::int64_t>(unit_bytes(schedule_.holds(b))));
    record_after_update(r, schedule_.after_update());
}

std::size_t ShardEngine::timeline_idle_bytes() const {
    if (stage_ != ShardStage::zero3) return 0;
    std::size_t idle = 0;
    for (int b = 0; b < 3; ++b) {
        if (!gather_[b].defined()) continue;
        idle += gather_[b].nbytes();
        if (schedule_.holds(b) >= 0) idle -= unit_bytes(schedule_.holds(b));
    }
    return idle;
}

// ---- checkpoints (train/resume.h) ------------------------------------------------------------------------

FlatRemap make_flat_remap(const Model& model) {
    FlatRemap m;
    const std::int64_t align = static_cast<std::int64_t>(param_align_elements(model.options().dtype));
    const std::int64_t pad = align * model.options().unit_pad_multiple;
    std::vector<std::int64_t> sizes;
    for (const NamedTensor& t : model.state_dict())
        if (t.trainable && !t.tied) sizes.push_back(t.tensor.numel());
    std::size_t next = 0;
    std::int64_t canonical = 0;
    for (const ParamUnit& u : model.param_units()) {
        std::int64_t pos = u.offset, acc = 0;
        while (acc < u.values && next < sizes.size()) {
            pos = (pos + align - 1) / align * align;
            m.tensor_offsets.push_back(pos);
            pos += sizes[next];
            acc += sizes[next++];
        }
        const std::int64_t content = pos - u.offset;
        if (acc != u.values || (content + pad - 1) / pad * pad != u.numel)
            throw Error("internal: the flat layout of unit " + std::to_string(m.runs.size()) +
                        " is not what its tensors make (" + std::to_string(u.numel) + " elements)");
        if (u.numel == 0) continue;
        m.runs.push_back({u.offset, canonical, content});
        canonical += (content + align - 1) / align * align;
    }
    if (next != sizes.size()) throw Error("internal: tensors outside the model's units");
    m.canonical_numel = canonical;
    m.run_numel = model.flat_numel();
    return m;
}

std::vector<std::uint8_t> flat_to_canonical(const FlatRemap& m, const std::uint8_t* run_flat, std::size_t es) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(m.canonical_numel) * es, 0);
    for (const FlatRemap::Run& r : m.runs)
        std::memcpy(out.data() + static_cast<std::size_t>(r.canonical_offset) * es,
                    run_flat + static_cast<std::size_t>(r.run_offset) * es, static_cast<std::size_t>(r.numel) * es);
    return out;
}

std::vector<std::uint8_t> canonical_to_flat(const FlatRemap& m, const std::uint8_t* canonical, std::size_t es) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(m.run_numel) * es, 0);
    for (const FlatRemap::Run& r : m.runs)
        std::memcpy(out.data() + static_cast<std::size_t>(r.run_offset) * es,
                    canonical + static_cast<std::size_t>(r.canonical_offset) * es, static_cast<std::size_t>(r.numel) * es);
    return out;
}

Tensor ShardEngine::idle_memory() const {
    // between steps no gradient is needed: the flat gradient buffer, else the larger of the gradient shard
    // and a bucket (zero2/3); begin_step zeroes them before the next backward
    Tensor base = model_->gradients();
    if ((!base.defined() || base.nbytes() == 0) && !offload_) base = grad_shard_;  // (offloaded: host memory)
    for (const Tensor& b : bucket_)
        if (b.defined() && (!base.defined() || b.nbytes() > base.nbytes())) base = b;
    return base;
}

Tensor ShardEngine::scratch(DType dt) const {
    Tensor base = idle_memory();
    // a rank without parameters (a pipeline stage of parameter-free layers): its own small buffer (attach)
    if (!base.defined() || base.nbytes() < 4096) base = small_scratch_;
    if (!base.defined()) throw Error("internal: no idle memory to move a checkpoint through");
    return Tensor(base.storage(), base.byte_offset(), {static_cast<std::int64_t>(base.nbytes() / dtype_size(dt))}, dt);
}

void ShardEngine::gather_state(const Tensor& buffer, Backend& holder, std::uint8_t* flat) {
    const std::size_t es = dtype_size(buffer.dtype());
    if (stage_ < ShardStage::zero1) {  // the whole buffer on every rank, alike
        if (flat) holder.copy_to_host(buffer, flat);
        return;
    }
    const int N = layout_.world_size, r = layout_.rank;
    if (N == 1 || !comm_) {  // one rank's shards are the whole units
        for (const UnitShard& u : layout_.units)
            if (u.shard_numel > 0 && flat)
                holder.copy_to_host(buffer.view(u.shard_offset, {u.shard_numel}), flat + static_cast<std::size_t>(u.own_offset) * es);
        return;
    }
    Tensor sc = scratch(buffer.dtype());
    // at most 256 MiB a collective (MPI counts are ints)
    const std::int64_t chunk = std::min<std::int64_t>(sc.numel(), (std::int64_t{1} << 28) / static_cast<std::int64_t>(es)) / N;
    if (chunk < 1) throw Error("internal: the idle gradient memory is too small to gather a checkpoint");
    std::vector<std::uint8_t> staged, host;
    for (const UnitShard& u : layout_.units) {
        for (std::int64_t k = 0; k < u.shard_numel; k += chunk) {
            const std::int64_t len = std::min(chunk, u.shard_numel - k);
            Tensor out = sc.view(0, {N * len});
            Tensor in = out.view(r * len, {len});
            const Tensor src = buffer.view(u.shard_offset + k, {len});
            if (&holder == device_) {
                device_->copy(src, in);
            } else {  // offloaded: through the host
                staged.resize(static_cast<std::size_t>(len) * es);
                holder.copy_to_host(src, staged.data());
                device_->copy_from_host(staged.data(), in);
            }
            CommHandle h = comm_->all_gather(in, out);
            h.wait();
            if (!flat) continue;
            comm_->synchronize();  // the read-back below waits for the gather: first with the rank timeout
            host.resize(static_cast<std::size_t>(N * len) * es);
            device_->copy_to_host(out, host.data());
            for (int q = 0; q < N; ++q)
                std::memcpy(flat + static_cast<std::size_t>(u.offset + q * u.shard_numel + k) * es,
                            host.data() + static_cast<std::size_t>(q * len) * es, static_cast<std::size_t>(len) * es);
        }
    }
    comm_->check();
}

void ShardEngine::scatter_state(const std::uint8_t* flat, Tensor& buffer, Backend& holder) const {
    const std::size_t es = dtype_size(buffer.dtype());
    if (stage_ < ShardStage::zero1) {
        holder.copy_from_host(flat, buffer);
        return;
    }
    for (const UnitShard& u : layout_.units) {
        if (u.shard_numel == 0) continue;
        Tensor piece = buffer.view(u.shard_offset, {u.shard_numel});
        holder.copy_from_host(flat + static_cast<std::size_t>(u.own_offset) * es, piece);
    }
}

void ShardEngine::gather_parameters(std::uint8_t* flat) {
    if (stage_ != ShardStage::zero3) throw Error("internal: gather_parameters is for zero3");
    gather_state(param_shard_, pieces_holder(), flat);
}

void ShardEngine::load_parameters(const std::uint8_t* flat) {
    if (stage_ != ShardStage::zero3) throw Error("internal: load_parameters is for zero3");
    for (Pending& p : gather_pending_)
        if (p.unit >= 0) {
            p.handle.wait();
            p.unit = -1;
        }
    scatter_state(flat, param_shard_, pieces_holder());
    for (int b = 0; b < 3; ++b) schedule_.set_holds(b, -1);  // the gathered copies are stale: the next forward gathers afresh
}

void ShardEngine::broadcast_bytes(std::uint8_t* data, std::size_t bytes, int root) {
    if (!comm_ || comm_->world_size() == 1 || bytes == 0) return;
    Tensor sc = scratch(DType::u8);
    // the same pieces on every rank: the smallest rank's idle memory (a split head's ranks differ in it)
    const std::size_t mine = std::min<std::size_t>(static_cast<std::size_t>(sc.numel()), std::size_t{1} << 28);
    const std::size_t chunk = static_cast<std::size_t>(-comm_->all_reduce_value(-static_cast<double>(mine), ReduceOp::max));
    for (std::size_t k = 0; k < bytes; k += chunk) {
        const std::size_t len = std::min(chunk, bytes - k);
        Tensor t = sc.view(0, {static_cast<std::int64_t>(len)});
        if (layout_.rank == root) device_->copy_from_host(data + k, t);
        CommHandle h = comm_->broadcast(t, root);
        h.wait();
        if (layout_.rank != root) {
            comm_->synchronize();  // as in gather_state: the timeout, not a read-back that blocks forever
            device_->copy_to_host(t, data + k);
        }
    }
    comm_->check();
}

}  // namespace hr
