// The CPU backend's f32 convolutions on oneDNN (cpu_conv_dnnl.h says why and how).
#include "backend/cpu/cpu_conv_dnnl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "backend/cpu/thread_pool.h"
#include "base/error.h"

#ifdef HEADROOM_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace hr::cpu {

void add_chunk_partials(int threads, const float* partial, std::int64_t chunks, std::int64_t KT, std::int64_t K,
                        float* dw, float* db) {
    const std::int64_t per_chunk = KT + K;
    // each element on its own: any split of the loop over threads gives the same sums
    parallel_chunks(threads, per_chunk, 1 << 14, [&](std::int64_t b0, std::int64_t e0) {
        for (std::int64_t i = b0; i < e0; ++i) {
            if (i >= KT && !db) break;
            float s = partial[i];
            for (std::int64_t gi = 1; gi < chunks; ++gi) s += partial[gi * per_chunk + i];
            if (i < KT)
                dw[i] += s;
            else
                db[i - KT] += s;
        }
    });
}

#ifndef HEADROOM_HAVE_DNNL

// Built without oneDNN: dnnl_conv_workspace_bytes is 0 for every shape, so the backend never calls the others.
bool dnnl_conv_enabled() { return false; }
std::string dnnl_version() { return {}; }
std::size_t dnnl_conv_workspace_bytes(ConvKind, const ConvGeom&, const Conv2dParams&, int) { return 0; }
namespace {
[[noreturn]] void not_built() { throw Error("internal: a oneDNN convolution was called in a build without oneDNN"); }
}  // namespace
void dnnl_conv_forward(int, const ConvGeom&, const Conv2dParams&, const float*, const float*, const float*, float*,
                       void*) {
    not_built();
}
void dnnl_conv_backward_data(int, const ConvGeom&, const Conv2dParams&, const float*, const float*, float*, void*) {
    not_built();
}
void dnnl_conv_backward_filter(int, const ConvGeom&, const Conv2dParams&, const float*, const float*, float*, float*,
                               void*) {
    not_built();
}
void dnnl_conv_backward(int, const ConvGeom&, const Conv2dParams&, const float*, const float*, const float*, float*,
                        float*, float*, void*) {
    not_built();
}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

constexpr std::size_t kAlign = 64;
std::size_t align_up(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

dnnl::engine& cpu_engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

// One stream per calling thread (a stream is not meant to be shared by threads executing at once).
dnnl::stream& thread_stream() {
    thread_local dnnl::stream s(cpu_engine());
    return s;
}

// Everything oneDNN needs for one call kind and one chunk size (mb samples) at one geometry: the primitive
// in oneDNN's preferred layouts and the reorders into and out of them (none where the preferred layout is
// NCHW/OIHW itself).
//   forward:          per chunk x -> src, dst -> y;      shared w -> weights
//   backward data:    per chunk dy -> diff_dst, diff_src -> dx;  shared w -> weights
//   backward weights: per chunk x -> src, dy -> diff_dst, diff_weights -> the chunk's partial dw
// Workspace of a call: the shared weights (once per chunk size) | per thread slot: the chunk's inputs |
// its output | the scratchpad of the primitive and the reorders; each 64-byte aligned.
struct Operand {
    memory::desc user, prim;
    std::optional<dnnl::reorder::primitive_desc> re_pd;  // user -> prim for inputs, prim -> user for the output
    mutable std::optional<dnnl::reorder> re;             // made from re_pd by build()
    std::size_t at = 0;  // in the slot (per-chunk operands) or the shared area (weights)
    int arg = 0;
};

// The primitive descriptors are made with the plan; the primitives (oneDNN's JIT-compiled code and objects)
// only by build(), on the plan's first call: see there.
struct ChunkPlan {
    std::optional<dnnl::primitive_desc> pd;
    mutable dnnl::primitive prim;
    Operand in[2];  // per chunk
    int n_in = 0;
    Operand out;    // per chunk
    Operand wts;    // shared (forward, backward data)
    bool has_wts = false;
    // both backward calls in one (ConvKind::backward): prim is backward weights, prim2 backward data on the
    // same reordered dy (in[1]), with the weights and the output out2 (dx)
    std::optional<dnnl::primitive_desc> pd2;
    mutable std::optional<dnnl::primitive> prim2;
    Operand out2;
    mutable std::once_flag built;
    std::size_t at_scratch = 0, slot_bytes = 0, shared_bytes = 0;
};

memory::desc plain(const memory::dims& d, Tag t) { return memory::desc(d, DT::f32, t); }

std::unique_ptr<ChunkPlan> make_plan(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, std::int64_t mb) {
    const memory::dims src{mb, g.C, g.H, g.W}, wei{g.K, g.C, g.kh, g.kw}, dst{mb, g.K, g.Ho, g.Wo};
    const memory::dims strides{p.stride_h, p.stride_w}, pad_l{p.pad_h, p.pad_w};
    // the right/bottom padding that makes oneDNN's output size the given one (floor division may drop
    // input rows: the padding is then smaller, possibly negative)
    const memory::dims pad_r{(g.Ho - 1) * p.stride_h + g.kh - g.H - p.pad_h, (g.Wo - 1) * p.stride_w + g.kw - g.W - p.pad_w};
    const auto u_src = plain(src, Tag::nchw), u_dst = plain(dst, Tag::nchw), u_w = plain(wei, Tag::oihw);
    const auto a_src = plain(src, Tag::any), a_dst = plain(dst, Tag::any), a_w = plain(wei, Tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto& eng = cpu_engine();
    const dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, a_src,
                                        a_w, a_dst, strides, pad_l, pad_r),
        attr, eng);
    auto plan = std::make_unique<ChunkPlan>();
    std::size_t scratch = 0;
    auto reorder = [&](const memory::desc& from, const memory::desc& to) {
        const dnnl::reorder::primitive_desc rpd(eng, from, eng, to, attr);
        scratch = std::max(scratch, rpd.scratchpad_desc().get_size());
        return rpd;
    };
    auto input = [&](const memory::desc& user, const memory::desc& prim, int arg) {
        Operand o{user, prim, std::nullopt, std::nullopt, 0, arg};
        if (prim != user) o.re_pd = reorder(user, prim);
        return o;
    };
    auto output = [&](const memory::desc& prim, const memory::desc& user, int arg) {
        Operand o{user, prim, std::nullopt, std::nullopt, 0, arg};
        if (prim != user) o.re_pd = reorder(prim, user);
        return o;
    };
    if (kind == ConvKind::forward) {
        scratch = fwd.scratchpad_desc().get_size();
        plan->pd = fwd;
        plan->in[plan->n_in++] = input(u_src, fwd.src_desc(), DNNL_ARG_SRC);
        plan->wts = input(u_w, fwd.weights_desc(), DNNL_ARG_WEIGHTS);
        plan->has_wts = true;
        plan->out = output(fwd.dst_desc(), u_dst, DNNL_ARG_DST);
    } else if (kind == ConvKind::backward_data) {
        const dnnl::convolution_backward_data::primitive_desc pd(
            dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, a_src, a_w, a_dst, strides, pad_l,
                                                  pad_r),
            attr, eng, fwd);
        scratch = pd.scratchpad_desc().get_size();
        plan->pd = pd;
        plan->in[plan->n_in++] = input(u_dst, pd.diff_dst_desc(), DNNL_ARG_DIFF_DST);
        plan->wts = input(u_w, pd.weights_desc(), DNNL_ARG_WEIGHTS);
        plan->has_wts = true;
        plan->out = output(pd.diff_src_desc(), u_src, DNNL_ARG_DIFF_SRC);
    } else {
        const dnnl::convolution_backward_weights::primitive_desc pd(
            dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, a_src, a_w, a_dst, strides,
                                                     pad_l, pad_r),
            attr, eng, fwd);
        scratch = pd.scratchpad_desc().get_size();
        plan->pd = pd;
        plan->in[plan->n_in++] = input(u_src, pd.src_desc(), DNNL_ARG_SRC);
        plan->in[plan->n_in++] = input(u_dst, pd.diff_dst_desc(), DNNL_ARG_DIFF_DST);
        plan->out = output(pd.diff_weights_desc(), u_w, DNNL_ARG_DIFF_WEIGHTS);
        if (kind == ConvKind::backward) {
            const dnnl::convolution_backward_data::primitive_desc dpd(
                dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, a_src, a_w, a_dst, strides,
                                                      pad_l, pad_r),
                attr, eng, fwd);
            // one reordered dy for both: only when they want it in the same layout
            if (dpd.diff_dst_desc() != pd.diff_dst_desc())
                throw dnnl::error(dnnl_unimplemented, "backward data and weights want dy in different layouts");
            scratch = std::max(scratch, dpd.scratchpad_desc().get_size());
            plan->pd2 = dpd;
            plan->wts = input(u_w, dpd.weights_desc(), DNNL_ARG_WEIGHTS);
            plan->has_wts = true;
            plan->out2 = output(dpd.diff_src_desc(), u_src, DNNL_ARG_DIFF_SRC);
        }
    }
    std::size_t at = 0;
    for (int i = 0; i < plan->n_in; ++i) {
        plan->in[i].at = at;
        if (plan->in[i].re_pd) at += align_up(plan->in[i].prim.get_size());
    }
    plan->out.at = at;
    if (plan->out.re_pd) at += align_up(plan->out.prim.get_size());
    plan->out2.at = at;
    if (plan->pd2 && plan->out2.re_pd) at += align_up(plan->out2.prim.get_size());
    plan->at_scratch = at;
    plan->slot_bytes = at + align_up(std::max<std::size_t>(scratch, 1));
    plan->shared_bytes = plan->has_wts && plan->wts.re_pd ? align_up(plan->wts.prim.get_size()) : 0;
    return plan;
}

using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t, int, int, int, int, std::int64_t, std::int64_t>;

// What sizing a workspace needs of a plan: its bytes (the plan itself is not kept).
struct PlanBytes {
    std::size_t slot_bytes = 0, shared_bytes = 0;
};

std::mutex g_mutex;
std::map<Key, std::unique_ptr<ChunkPlan>> g_plans;  // a null entry: oneDNN cannot do these shapes
std::map<Key, std::optional<PlanBytes>> g_bytes;    // likewise (nullopt)

Key key_of(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, std::int64_t mb) {
    return Key{static_cast<int>(kind), mb, g.C, g.H, g.W, g.K, g.kh, g.kw, p.stride_h, p.stride_w, p.pad_h, p.pad_w,
               g.Ho, g.Wo};
}

// A new plan, null when oneDNN refuses the shapes. oneDNN fixes a primitive's thread split when its
// descriptor is created (from OpenMP's thread count then) and executes with that many threads: created for
// 1, as every chunk runs on one thread.
std::unique_ptr<ChunkPlan> new_plan(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, std::int64_t mb) {
    std::unique_ptr<ChunkPlan> plan;
    const int omp_threads = omp_get_max_threads();
    omp_set_num_threads(1);
    try {
        plan = make_plan(kind, g, p, mb);
    } catch (const dnnl::error&) {
        plan.reset();  // unsupported here: the caller uses the tap kernels
    }
    omp_set_num_threads(omp_threads);
    return plan;
}

// The plan for chunks of mb samples that a call runs (made once; thread-safe; never dropped: a call holds
// pointers to it without the lock). Null when oneDNN refuses the shapes.
const ChunkPlan* plan_for(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, std::int64_t mb) {
    const Key key = key_of(kind, g, p, mb);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_plans.find(key);
    if (it != g_plans.end()) return it->second.get();
    return g_plans.emplace(key, new_plan(kind, g, p, mb)).first->second.get();
}

// The bytes of the plan for chunks of mb samples, for sizing a workspace: from a plan made and dropped
// (or the one a call has made), so that sizing keeps no oneDNN objects. It sizes for every batch n <= N,
// ceil(N / 16) chunk sizes a layer, of which a run executes two or three: kept, their primitive
// descriptors alone held memory outside the ledger that grew with the planned batch (resnet-mini, about
// 30 MB more resident memory than ledger between batch 256 and 1024, +4.3 %; issue 46 item 7).
std::optional<PlanBytes> bytes_for(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, std::int64_t mb) {
    const Key key = key_of(kind, g, p, mb);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto b = g_bytes.find(key);
    if (b != g_bytes.end()) return b->second;
    std::optional<PlanBytes> bytes;
    auto it = g_plans.find(key);
    const std::unique_ptr<ChunkPlan> made = it == g_plans.end() ? new_plan(kind, g, p, mb) : nullptr;
    if (const ChunkPlan* plan = it == g_plans.end() ? made.get() : it->second.get())
        bytes = PlanBytes{plan->slot_bytes, plan->shared_bytes};
    return g_bytes.emplace(key, bytes).first->second;
}

// HEADROOM_CPU_CONV: unset or "dnnl" (all three calls), "wgrad" (backward filter only), "tap" (none)
int env_kinds() {
    const char* v = std::getenv("HEADROOM_CPU_CONV");
    if (v && std::strcmp(v, "tap") == 0) return 0;
    if (v && std::strcmp(v, "wgrad") == 0) return 1 << static_cast<int>(ConvKind::backward_weights);
    return 15;
}
int enabled_kinds() {
    static const int k = env_kinds();
    return k;
}

// The fixed chunks of one call (they depend on the shapes only): backward weights in wgrad_chunks(N)
// chunks, the others in chunks of at most kChunkSamples samples.
constexpr std::int64_t kChunkSamples = 4;  // 2 was 5-15 % slower on resnet-mini, 8 and 16 the same as 4
std::int64_t call_chunks(ConvKind kind, std::int64_t N) {
    return kind == ConvKind::backward_weights || kind == ConvKind::backward ? wgrad_chunks(N)
                                                                           : (N + kChunkSamples - 1) / kChunkSamples;
}

struct CallLayout {
    bool ok = false;                // oneDNN can do it
    const ChunkPlan* lo = nullptr;  // chunks of floor(N / G) samples (for a call that runs: with_plans)
    const ChunkPlan* hi = nullptr;  // and of ceil(N / G)
    std::int64_t chunks = 0, per_chunk = 0;
    std::size_t at_shared_hi = 0, at_slots = 0, slot = 0, bytes = 0;
    const ChunkPlan& of(std::int64_t samples, std::int64_t N) const { return samples == N / chunks ? *lo : *hi; }
};

// !ok when oneDNN cannot do it; with_plans: the plans too, for a call that runs (sizing needs their bytes only)
CallLayout call_layout(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, int threads, bool with_plans) {
    CallLayout l;
    const int kinds = enabled_kinds();
    const bool enabled = kind == ConvKind::backward ? (kinds & 6) == 6 : (kinds >> static_cast<int>(kind) & 1) != 0;
    if (g.N < 1 || !enabled || p.dilation_h != 1 || p.dilation_w != 1) return l;
    // oneDNN's blocked layouts hold 16 channels per vector: with channel counts that are not multiples of
    // 16 they compute padding, and the tap kernels win (seed-cnn's 1->10 and 10->20 5x5 convolutions: 1.3-4x
    // slower on oneDNN; resnet-mini's stem 1->16 no faster); a rule on the shapes, so a run's choice and
    // its bits never depend on timings (docs/benchmarks.md has the table)
    if (g.C % 16 != 0 || g.K % 16 != 0) return l;
    l.chunks = call_chunks(kind, g.N);
    const std::int64_t mlo = g.N / l.chunks, mhi = (g.N + l.chunks - 1) / l.chunks;
    const std::optional<PlanBytes> lo = bytes_for(kind, g, p, mlo), hi = mhi == mlo ? lo : bytes_for(kind, g, p, mhi);
    if (!lo || !hi) return l;
    if (with_plans) {
        l.lo = plan_for(kind, g, p, mlo);
        l.hi = mhi == mlo ? l.lo : plan_for(kind, g, p, mhi);
        if (!l.lo || !l.hi) return l;
    }
    l.ok = true;
    // backward weights: the chunks' partial dw and db first
    l.per_chunk = kind == ConvKind::backward_weights || kind == ConvKind::backward ? g.K * g.R() + g.K : 0;
    std::size_t at = align_up(static_cast<std::size_t>(l.chunks * l.per_chunk) * sizeof(float));
    at += lo->shared_bytes;
    l.at_shared_hi = at;
    if (mhi != mlo) at += hi->shared_bytes;
    l.at_slots = at;
    l.slot = std::max(lo->slot_bytes, hi->slot_bytes);
    l.bytes = l.at_slots + static_cast<std::size_t>(thread_slots(threads)) * l.slot + kAlign;
    return l;
}

// A plan's primitives (oneDNN's JIT-compiled kernels), made on the plan's first call: a plan made only to
// size a workspace (bytes_for) is dropped without ever compiling them. Created for one OpenMP thread, as the
// descriptors were.
void build(const ChunkPlan& c) {
    std::call_once(c.built, [&] {
        const int omp_threads = omp_get_max_threads();
        omp_set_num_threads(1);
        try {
            c.prim = dnnl::primitive(*c.pd);
            if (c.pd2) c.prim2 = dnnl::primitive(*c.pd2);
            for (const Operand* o : {&c.in[0], &c.in[1], &c.out, &c.out2, &c.wts})
                if (o->re_pd) o->re = dnnl::reorder(*o->re_pd);
        } catch (...) {
            omp_set_num_threads(omp_threads);
            throw;
        }
        omp_set_num_threads(omp_threads);
    });
}

char* aligned(void* ws) {
    auto a = reinterpret_cast<std::uintptr_t>(ws);
    return reinterpret_cast<char*>((a + kAlign - 1) / kAlign * kAlign);
}

// One call: the weights reordered once per chunk size, then the chunks on the pool's threads.
// in0/in1: per-sample strides in floats of the per-chunk inputs; out likewise (0 for backward weights,
// whose output is the chunk's partial).
void run_call(ConvKind kind, int threads, const ConvGeom& g, const Conv2dParams& p, const float* in0,
              std::int64_t in0_stride, const float* in1, std::int64_t in1_stride, const float* w, float* out,
              std::int64_t out_stride, float* out2, std::int64_t out2_stride, void* workspace, const CallLayout& l) {
    // the backend calls only where the workspace was sized for oneDNN, from the same shapes
    if (!l.ok) throw Error("internal: oneDNN refused a convolution whose workspace it had sized");
    build(*l.lo);
    if (l.hi != l.lo) build(*l.hi);
    char* base = aligned(workspace);
    auto& eng = cpu_engine();
    const std::size_t at_shared_lo = align_up(static_cast<std::size_t>(l.chunks * l.per_chunk) * sizeof(float));
    auto shared_of = [&](const ChunkPlan& c) { return base + (&c == l.lo ? at_shared_lo : l.at_shared_hi); };
    // oneDNN never writes its inputs: the const_casts only fit its C++ API
    for (int i = 0; i < (l.hi == l.lo ? 1 : 2); ++i) {
        const ChunkPlan* c = i == 0 ? l.lo : l.hi;
        if (!c->has_wts || !c->wts.re) continue;
        omp_set_num_threads(1);
        memory uw(c->wts.user, eng, const_cast<float*>(w));
        memory bw(c->wts.prim, eng, shared_of(*c));
        auto& s = thread_stream();
        c->wts.re->execute(s, uw, bw);
        s.wait();
    }
    auto* partial = reinterpret_cast<float*>(base);
    parallel_for_slots(threads, l.chunks, [&](std::int64_t gi, int slot) {
        omp_set_num_threads(1);  // oneDNN's OpenMP runtime: this thread alone runs the chunk
        const std::int64_t n0 = g.N * gi / l.chunks, n1 = g.N * (gi + 1) / l.chunks;
        const ChunkPlan& c = l.of(n1 - n0, g.N);
        char* mine = base + l.at_slots + slot * l.slot;
        auto& s = thread_stream();
        memory scratch(memory::desc({static_cast<memory::dim>(l.slot - c.at_scratch)}, DT::u8, Tag::x), eng,
                       mine + c.at_scratch);
        std::unordered_map<int, memory> args;
        args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
        const float* ins[2] = {in0 + n0 * in0_stride, in1 ? in1 + n0 * in1_stride : nullptr};
        for (int i = 0; i < c.n_in; ++i) {
            const Operand& o = c.in[i];
            memory user(o.user, eng, const_cast<float*>(ins[i]));
            if (o.re) {
                memory prim(o.prim, eng, mine + o.at);
                o.re->execute(s, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, prim}, {DNNL_ARG_SCRATCHPAD, scratch}});
                args.emplace(o.arg, prim);
            } else {
                args.emplace(o.arg, user);
            }
        }
        std::optional<memory> wts;
        if (c.has_wts)
            wts = c.wts.re ? memory(c.wts.prim, eng, shared_of(c)) : memory(c.wts.user, eng, const_cast<float*>(w));
        if (wts && !c.prim2) args.emplace(c.wts.arg, *wts);
        const bool partial_out = kind == ConvKind::backward_weights || kind == ConvKind::backward;
        float* dst = partial_out ? partial + gi * l.per_chunk : out + n0 * out_stride;
        memory user_out(c.out.user, eng, dst);
        memory prim_out = c.out.re ? memory(c.out.prim, eng, mine + c.out.at) : user_out;
        args.emplace(c.out.arg, prim_out);
        c.prim.execute(s, args);
        if (c.out.re)
            c.out.re->execute(s, {{DNNL_ARG_FROM, prim_out}, {DNNL_ARG_TO, user_out}, {DNNL_ARG_SCRATCHPAD, scratch}});
        if (c.prim2) {  // backward data on the dy reordered above
            memory user_dx(c.out2.user, eng, out2 + n0 * out2_stride);
            memory prim_dx = c.out2.re ? memory(c.out2.prim, eng, mine + c.out2.at) : user_dx;
            c.prim2->execute(s, {{DNNL_ARG_DIFF_DST, args.at(DNNL_ARG_DIFF_DST)}, {c.wts.arg, *wts},
                                 {DNNL_ARG_DIFF_SRC, prim_dx}, {DNNL_ARG_SCRATCHPAD, scratch}});
            if (c.out2.re)
                c.out2.re->execute(s, {{DNNL_ARG_FROM, prim_dx}, {DNNL_ARG_TO, user_dx}, {DNNL_ARG_SCRATCHPAD, scratch}});
        }
        s.wait();
    });
}

}  // namespace

bool dnnl_conv_enabled() { return enabled_kinds() != 0; }

std::string dnnl_version() {
    const dnnl_version_t* v = ::dnnl_version();
    return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

// The figure is the most that a call at any batch n <= g.N needs, not only at n = g.N: a layer's workspace
// is sized once for the planned batch, and the last batch of an epoch (500 rows at 128: 116) or an
// evaluation batch is smaller. A smaller batch runs in other chunk sizes (116 samples: backward filter in
// chunks of 7 and 8 samples, two weight copies; 128: 8 only), and oneDNN may pick another implementation
// for another minibatch, with another scratchpad and weights layout: a figure for n = g.N alone was too
// small for n = 116 (resnet-mini, Fashion-MNIST, 3408064 bytes against 3555520 needed).
// Why the maximum and not a fallback in the call: the call keeps oneDNN at every batch size (its bits do
// not depend on the planned batch) and the planner and ledger stay exact (this is what the call needs at
// its worst n). It stays cheap: a call's bytes depend on n only through its pair of chunk sizes
// (floor(n / G), ceil(n / G)) and its chunk count G, so a few n cover every n <= N:
//   forward, backward data (chunks of <= 4 samples, no per-chunk partials): n = 1 .. min(N, 8) give every
//   pair there is ((1,1) (2,2) (3,3) (4,4) (2,3) (3,4));
//   backward filter (min(n, 16) chunks): n < 16 runs chunks of 1 (most partials at n = min(N, 15)); from
//   16 on, G = 16 and n = 16m gives (m, m), n = 16m + 1 .. 16m + 15 all give (m, m + 1).
// So oneDNN primitive descriptors for at most ceil(N / 16) chunk sizes per call kind (4 for forward and
// backward data), made once and cached (plan_for); the primitives themselves only for the chunk sizes a
// call runs (build).
std::size_t dnnl_conv_workspace_bytes(ConvKind kind, const ConvGeom& g, const Conv2dParams& p, int threads) {
    if (g.N < 1) return 0;
    const bool wgrad = kind == ConvKind::backward_weights || kind == ConvKind::backward;
    std::size_t most = 0;
    auto at = [&](std::int64_t n) {
        ConvGeom gn = g;
        gn.N = n;
        const CallLayout l = call_layout(kind, gn, p, threads, false);
        if (!l.ok) return false;
        most = std::max(most, l.bytes);
        return true;
    };
    // oneDNN refuses shapes, not batch sizes: one refusal sends every batch to the tap kernels
    if (!at(g.N)) return 0;
    const std::int64_t small = std::min<std::int64_t>(g.N - 1, wgrad ? kWgradChunks : 8);
    for (std::int64_t n = 1; n <= small; ++n)
        if (!at(n)) return 0;
    if (wgrad)
        for (std::int64_t m = 1; kWgradChunks * m < g.N; ++m)
            if (!at(kWgradChunks * m) || !at(std::min(g.N, kWgradChunks * m + 1))) return 0;
    return most;
}

void dnnl_conv_forward(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* w,
                       const float* bias, float* y, void* workspace) {
    const CallLayout l = call_layout(ConvKind::forward, g, p, threads, true);
    const std::int64_t P = g.P();
    run_call(ConvKind::forward, threads, g, p, x, g.C * g.H * g.W, nullptr, 0, w, y, g.K * P, nullptr, 0, workspace, l);
    if (bias)
        parallel_for(threads, g.N, [&](std::int64_t n) {
            for (std::int64_t k = 0; k < g.K; ++k) {
                float* row = y + (n * g.K + k) * P;
                const float b = bias[k];
                for (std::int64_t i = 0; i < P; ++i) row[i] += b;
            }
        });
}

void dnnl_conv_backward_data(int threads, const ConvGeom& g, const Conv2dParams& p, const float* dy, const float* w,
                             float* dx, void* workspace) {
    const CallLayout l = call_layout(ConvKind::backward_data, g, p, threads, true);
    run_call(ConvKind::backward_data, threads, g, p, dy, g.K * g.P(), nullptr, 0, w, dx, g.C * g.H * g.W, nullptr, 0,
             workspace, l);
}

namespace {
// Backward filter's end: each chunk's sum of dy per channel after its partial dw (when db is wanted), then
// the chunks' partials added to dw and db in chunk order.
void finish_wgrad(int threads, const ConvGeom& g, const float* dy, float* dw, float* db, void* workspace,
                  const CallLayout& l) {
    const std::int64_t KT = g.K * g.R(), P = g.P();
    auto* partial = reinterpret_cast<float*>(aligned(workspace));
    if (db)
        parallel_for(threads, l.chunks, [&](std::int64_t gi) {
            const std::int64_t n0 = g.N * gi / l.chunks, n1 = g.N * (gi + 1) / l.chunks;
            float* dbp = partial + gi * l.per_chunk + KT;
            for (std::int64_t k = 0; k < g.K; ++k) {
                float sum = 0.0f;
                for (std::int64_t n = n0; n < n1; ++n) {
                    const float* row = dy + (n * g.K + k) * P;
                    for (std::int64_t i = 0; i < P; ++i) sum += row[i];
                }
                dbp[k] = sum;
            }
        });
    add_chunk_partials(threads, partial, l.chunks, KT, g.K, dw, db);
}
}  // namespace

void dnnl_conv_backward_filter(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* dy,
                               float* dw, float* db, void* workspace) {
    const CallLayout l = call_layout(ConvKind::backward_weights, g, p, threads, true);
    run_call(ConvKind::backward_weights, threads, g, p, x, g.C * g.H * g.W, dy, g.K * g.P(), nullptr, nullptr, 0,
             nullptr, 0, workspace, l);
    finish_wgrad(threads, g, dy, dw, db, workspace, l);
}

void dnnl_conv_backward(int threads, const ConvGeom& g, const Conv2dParams& p, const float* x, const float* dy,
                        const float* w, float* dx, float* dw, float* db, void* workspace) {
    const CallLayout l = call_layout(ConvKind::backward, g, p, threads, true);
    run_call(ConvKind::backward, threads, g, p, x, g.C * g.H * g.W, dy, g.K * g.P(), w, nullptr, 0, dx, g.C * g.H * g.W,
             workspace, l);
    finish_wgrad(threads, g, dy, dw, db, workspace, l);
}

#endif

}  // namespace hr::cpu
