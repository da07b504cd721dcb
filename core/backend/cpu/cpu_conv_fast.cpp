// Fast f32 convolutions of the CPU backend: direct "tap" convolutions in NCHW, no im2col matrix.
//
// Forward, for one sample. The input is copied into a zero-padded buffer; for a stride s > 1 it is also
// split into s_h x s_w phases (phase (a, b) holds the padded rows a, a + s_h, ... and columns b, b + s_w,
// ...), so that every tap t = (c, i, j) of the kernel reads the buffer at one fixed offset off[t] from a
// "wide" output position q = oh * Wph + ow, where Wph is the buffer's row length:
//     y[k][q] = sum_t w[k][t] * buf[off[t] + q]
// That is a matrix product whose right-hand matrix (the im2col matrix) is never built; the AVX2 kernel
// (cpu_kernels_avx2.cpp) computes 4 output channels x 24 positions per block in registers. The columns
// ow >= Wo of each wide row are computed and dropped when the result is copied into y (2 of 30 columns
// for 28x28 with padding 1).
//
// Backward data is the same computation on dy: the input position (ih, iw) with ih + pad_h = R s_h + a
// receives from kernel rows i = a + m s_h only, so each of the s_h x s_w phases of dx is a stride-1
// correlation of the zero-padded dy with a flipped sub-kernel (the whole flipped kernel when s = 1).
// Backward filter reuses the forward's buffer: dw[k][t] = sum_q dy_wide[k][q] * buf[off[t] + q], with
// dy copied into wide rows whose extra columns are zero.
//
// Threads: forward and backward data run one chunk per sample; backward filter sums the batch in 16
// fixed chunks (partial dw per chunk, reduced in chunk order), so results do not depend on the
// thread count. Per-thread scratch (the buffers above) and the partials are in the layer's workspace.
//
// Measured against the reference im2col + OpenBLAS path on this project's 2-core CI machine: see
// docs/benchmarks.md ("CPU backend: decision").
#include "backend/cpu/cpu_conv_fast.h"

#include <emmintrin.h>  // SSE2: part of the x86-64 baseline

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_conv_dnnl.h"  // the wgrad chunks and their reduction, shared
#include "backend/cpu/thread_pool.h"

namespace hr::cpu {

namespace {

// A fast call may compute up to this many times the multiply-adds the convolution needs (padding
// columns, output channels rounded up to 4, full correlation over the zero border of dy); beyond it
// the reference im2col + BLAS path is faster.
constexpr double kMaxWaste = 2.0;

std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }
// ceil(a / b) for b > 0, and 0 for a <= 0
std::int64_t ceil_pos(std::int64_t a, std::int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// Row copies are short (7 to 30 floats): inline SSE copies, not a memcpy call per row (the compiler
// turns a plain copy loop into one).
inline void copy_row(float* dst, const float* src, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
    for (; i < n; ++i) dst[i] = src[i];
}
inline void zero_row(float* dst, std::int64_t n) {
    const __m128 z = _mm_setzero_ps();
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, z);
    for (; i < n; ++i) dst[i] = 0.0f;
}


// ---- forward (and backward-filter) geometry ---------------------------------------------------------

// Only the phases some tap reads are built: a < min(s_h, kh), b < min(s_w, kw) (one phase for 1x1
// kernels at any stride).
struct FwdPlan {
    std::int64_t Hph = 0, Wph = 0, plane = 0, nph_h = 1, nph_w = 1, nplanes = 0, T = 0, Q = 0, buf = 0;
    int nsamp = 1;  // samples per backward-filter kernel call (their buffers side by side)
};

std::int64_t fwd_offset(const ConvGeom& g, const Conv2dParams& p, const FwdPlan& f, std::int64_t c, std::int64_t i,
                        std::int64_t j) {
    const std::int64_t sh = p.stride_h, sw = p.stride_w;
    return ((c * f.nph_h + i % sh) * f.nph_w + j % sw) * f.plane + (i / sh) * f.Wph + j / sw;
}

FwdPlan fwd_plan(const ConvGeom& g, const Conv2dParams& p) {
    FwdPlan f;
    const std::int64_t Hpad = g.H + 2 * p.pad_h, Wpad = g.W + 2 * p.pad_w;
    f.Hph = ceil_pos(Hpad, p.stride_h);
    f.Wph = ceil_pos(Wpad, p.stride_w);
    f.plane = f.Hph * f.Wph;
    f.nph_h = std::min<std::int64_t>(p.stride_h, g.kh);
    f.nph_w = std::min<std::int64_t>(p.stride_w, g.kw);
    f.nplanes = g.C * f.nph_h * f.nph_w;
    f.T = g.C * g.kh * g.kw;
    f.Q = round_up(g.Ho * f.Wph, 8);
    std::int64_t max_off = 0;
    for (std::int64_t i = 0; i < g.kh; ++i)
        for (std::int64_t j = 0; j < g.kw; ++j) max_off = std::max(max_off, fwd_offset(g, p, f, g.C - 1, i, j));
    f.buf = round_up(std::max(f.nplanes * f.plane, max_off + f.Q), 16) + 16;
    // Backward filter sums several samples per kernel call when rows are short (fewer horizontal sums),
    // at most the samples of one chunk.
    const std::int64_t per_chunk = (g.N + kWgradChunks - 1) / kWgradChunks;
    f.nsamp = static_cast<int>(std::clamp<std::int64_t>((768 + f.Q - 1) / f.Q, 1, std::min<std::int64_t>(per_chunk, 8)));
    return f;
}

void fwd_offsets(const ConvGeom& g, const Conv2dParams& p, const FwdPlan& f, std::int32_t* off) {
    for (std::int64_t c = 0; c < g.C; ++c)
        for (std::int64_t i = 0; i < g.kh; ++i)
            for (std::int64_t j = 0; j < g.kw; ++j)
                off[(c * g.kh + i) * g.kw + j] = static_cast<std::int32_t>(fwd_offset(g, p, f, c, i, j));
}

// The zero-padded, phase-split copy of one sample x (C, H, W). Every float of the buffer is written
// (padding, the columns past each row and the slack after the planes as zeros).
void fill_fwd_buffer(const FastKernels& k, const ConvGeom& g, const Conv2dParams& p, const FwdPlan& f, const float* x,
                     float* buf) {
    const std::int64_t sh = p.stride_h, sw = p.stride_w, ph = p.pad_h, pw = p.pad_w;
    const std::int64_t used = f.nplanes * f.plane;
    if (sh == 1 && sw == 1) {
        // rows of W values, each followed by the right padding and the next row's left padding
        for (std::int64_t c = 0; c < g.C; ++c) {
            float* plane = buf + c * f.plane;
            const std::int64_t first = ph * f.Wph + pw, after = (ph + g.H) * f.Wph + pw;
            k.zero(plane, first);
            k.copy_rows(plane + first, f.Wph, x + c * g.H * g.W, g.W, g.H, g.W, false, 0.0f);
            k.zero(plane + after, f.plane - after);
        }
        k.zero(buf + used, f.buf - used);
        return;
    }
    if (sw == 2) {
        // x column iw goes to padded column iw + pw: phase (iw + pw) % 2, position (iw + pw) / 2
        k.zero(buf, f.buf);
        const std::int64_t b_even = pw % 2, b_odd = (pw + 1) % 2;
        for (std::int64_t c = 0; c < g.C; ++c)
            for (std::int64_t a = 0; a < f.nph_h; ++a) {
                const std::int64_t r_lo = ceil_pos(ph - a, sh), r_hi = std::min(f.Hph, ceil_pos(ph + g.H - a, sh));
                if (r_hi <= r_lo) continue;
                const std::int64_t ih0 = r_lo * sh + a - ph;
                auto plane = [&](std::int64_t b) { return buf + ((c * f.nph_h + a) * f.nph_w + b) * f.plane + r_lo * f.Wph; };
                float* even = b_even < f.nph_w ? plane(b_even) + pw / 2 : nullptr;
                float* odd = b_odd < f.nph_w ? plane(b_odd) + (pw + 1) / 2 : nullptr;
                k.deinterleave_rows(even, odd, f.Wph, x + (c * g.H + ih0) * g.W, sh * g.W, r_hi - r_lo, g.W);
            }
        return;
    }
    for (std::int64_t c = 0; c < g.C; ++c)
        for (std::int64_t a = 0; a < f.nph_h; ++a)
            for (std::int64_t b = 0; b < f.nph_w; ++b) {
                float* plane = buf + ((c * f.nph_h + a) * f.nph_w + b) * f.plane;
                const std::int64_t u_lo = ceil_pos(pw - b, sw);
                const std::int64_t u_hi = std::min(f.Wph, ceil_pos(pw + g.W - b, sw));
                for (std::int64_t r = 0; r < f.Hph; ++r) {
                    const std::int64_t ih = r * sh + a - ph;
                    float* dst = plane + r * f.Wph;
                    if (ih < 0 || ih >= g.H || u_hi <= u_lo) {
                        zero_row(dst, f.Wph);
                        continue;
                    }
                    const float* xr = x + (c * g.H + ih) * g.W;
                    zero_row(dst, u_lo);
                    if (sw == 1) {
                        copy_row(dst + u_lo, xr + u_lo - pw, u_hi - u_lo);
                    } else {
                        for (std::int64_t u = u_lo; u < u_hi; ++u) dst[u] = xr[u * sw + b - pw];
                    }
                    zero_row(dst + u_hi, f.Wph - u_hi);
                }
            }
    k.zero(buf + used, f.buf - used);
}

// w (K, T) row-major into [ceil(K/4)][T][4] (rows past K zero).
void pack_weights(const float* w, std::int64_t K, std::int64_t T, float* wp) {
    const std::int64_t KB = (K + 3) / 4;
    for (std::int64_t kb = 0; kb < KB; ++kb)
        for (std::int64_t t = 0; t < T; ++t)
            for (std::int64_t r = 0; r < 4; ++r) {
                const std::int64_t k = kb * 4 + r;
                wp[(kb * T + t) * 4 + r] = k < K ? w[k * T + t] : 0.0f;
            }
}

// ---- backward-data geometry -------------------------------------------------------------------------

struct BwdPhase {
    std::int64_t a = 0, b = 0, M = 0, N = 0, T = 0, R_lo = 0, nR = 0, U_lo = 0, nU = 0, Q = 0;
    std::int64_t off_begin = 0, wp_begin = 0;  // into the shared offset / packed-weight arrays
    std::int64_t wide_begin = 0;               // this phase's output rows in the per-thread wide buffer
};

struct BwdPlan {
    std::int64_t Pt = 0, Pl = 0, Hdb = 0, Wdb = 0, plane = 0, buf = 0, total_T = 0, wp_floats = 0, max_Q = 0;
    std::int64_t wide_floats = 0;  // all phases' outputs (C rounded to 4 rows each)
    std::vector<BwdPhase> phases;
};

BwdPlan bwd_plan(const ConvGeom& g, const Conv2dParams& p) {
    BwdPlan b;
    const std::int64_t sh = p.stride_h, sw = p.stride_w, ph = p.pad_h, pw = p.pad_w;
    for (std::int64_t a = 0; a < sh; ++a)
        for (std::int64_t bb = 0; bb < sw; ++bb) {
            BwdPhase f;
            f.a = a;
            f.b = bb;
            f.M = ceil_pos(g.kh - a, sh);
            f.N = ceil_pos(g.kw - bb, sw);
            f.R_lo = ceil_pos(ph - a, sh);
            f.nR = std::max<std::int64_t>(0, ceil_pos(ph + g.H - a, sh) - f.R_lo);
            f.U_lo = ceil_pos(pw - bb, sw);
            f.nU = std::max<std::int64_t>(0, ceil_pos(pw + g.W - bb, sw) - f.U_lo);
            f.T = g.K * f.M * f.N;
            if (f.T > 0 && f.nR > 0 && f.nU > 0) {
                b.Pt = std::max(b.Pt, f.M - 1 - f.R_lo);
                b.Pl = std::max(b.Pl, f.N - 1 - f.U_lo);
            }
            b.phases.push_back(f);
        }
    b.Wdb = b.Pl + g.Wo;
    b.Hdb = b.Pt + g.Ho;
    for (const auto& f : b.phases) {
        b.Wdb = std::max(b.Wdb, f.U_lo + f.nU + b.Pl);
        b.Hdb = std::max(b.Hdb, f.R_lo + f.nR + b.Pt);
    }
    b.plane = b.Hdb * b.Wdb;
    const std::int64_t CB4 = (g.C + 3) / 4 * 4;
    std::int64_t need = g.K * b.plane;
    for (auto& f : b.phases) {
        f.Q = round_up(f.nR * b.Wdb, 8);
        f.off_begin = b.total_T;
        f.wp_begin = b.wp_floats;
        b.total_T += f.T;
        b.wp_floats += CB4 * f.T;
        b.max_Q = std::max(b.max_Q, f.Q);
        f.wide_begin = b.wide_floats;
        if (f.T > 0) b.wide_floats += CB4 * f.Q;
        if (f.T > 0) {
            const std::int64_t max_off = (g.K - 1) * b.plane + (f.R_lo + b.Pt) * b.Wdb + f.U_lo + b.Pl;
            need = std::max(need, max_off + f.Q);
        }
    }
    b.buf = round_up(need, 16) + 16;
    return b;
}

// Offsets and packed flipped weights of every phase.
void bwd_tables(const ConvGeom& g, const Conv2dParams& p, const BwdPlan& b, const float* w, std::int32_t* off,
                float* wp, std::vector<float>& tmp) {
    for (const auto& f : b.phases) {
        if (f.T == 0) continue;
        tmp.assign(static_cast<std::size_t>(g.C * f.T), 0.0f);  // (C, T_phase)
        for (std::int64_t k = 0; k < g.K; ++k)
            for (std::int64_t m = 0; m < f.M; ++m)
                for (std::int64_t n = 0; n < f.N; ++n) {
                    const std::int64_t t = (k * f.M + m) * f.N + n;
                    off[f.off_begin + t] = static_cast<std::int32_t>(
                        k * b.plane + (f.R_lo + m - (f.M - 1) + b.Pt) * b.Wdb + (f.U_lo + n - (f.N - 1) + b.Pl));
                    const std::int64_t i = f.a + (f.M - 1 - m) * p.stride_h;
                    const std::int64_t j = f.b + (f.N - 1 - n) * p.stride_w;
                    for (std::int64_t c = 0; c < g.C; ++c)
                        tmp[c * f.T + t] = w[((k * g.C + c) * g.kh + i) * g.kw + j];
                }
        pack_weights(tmp.data(), g.C, f.T, wp + f.wp_begin);
    }
}

// ---- workspace --------------------------------------------------------------------------------------

struct Layout {
    std::int64_t wp = 0, off = 0, partial = 0, slot_a = 0, slot_b = 0;  // floats (offsets: int32 count)
    std::int64_t n_slots = 1, chunks = 1;
    std::size_t bytes = 0;
    // float offsets of the regions from the aligned base
    std::int64_t at_wp = 0, at_off = 0, at_partial = 0, at_slots = 0;
};

Layout layout(const ConvGeom& g, const Conv2dParams& p, const FwdPlan& f, const BwdPlan& b, int threads) {
    Layout l;
    const std::int64_t KB4 = (g.K + 3) / 4 * 4;
    l.wp = round_up(std::max(KB4 * f.T, b.wp_floats), 16);
    l.off = round_up(std::max(f.T, b.total_T), 16);
    l.chunks = wgrad_chunks(g.N);
    l.partial = round_up(l.chunks * (g.K * f.T + g.K), 16);
    l.slot_a = round_up(std::max(f.nsamp * f.buf, b.buf), 16);
    l.slot_b = round_up(std::max(f.nsamp * KB4 * f.Q, b.wide_floats), 16);
    l.n_slots = thread_slots(threads);
    l.at_wp = 0;
    l.at_off = l.at_wp + l.wp;
    l.at_partial = l.at_off + l.off;  // int32 and float are both 4 bytes
    l.at_slots = l.at_partial + l.partial;
    const std::int64_t floats = l.at_slots + l.n_slots * (l.slot_a + l.slot_b);
    l.bytes = static_cast<std::size_t>(floats) * sizeof(float) + 64;
    return l;
}

float* aligned_base(void* ws) {
    auto a = reinterpret_cast<std::uintptr_t>(ws);
    a = (a + 63) / 64 * 64;
    return reinterpret_cast<float*>(a);
}

}  // namespace

bool fast_conv_supported(const ConvGeom& g, const Conv2dParams& p) {
    if (p.dilation_h != 1 || p.dilation_w != 1) return false;
    if (g.N < 1 || g.C < 1 || g.K < 1) return false;
    // 32-bit tap offsets and int loop bounds in the kernels
    const FwdPlan f = fwd_plan(g, p);
    const BwdPlan b = bwd_plan(g, p);
    constexpr std::int64_t lim = std::numeric_limits<std::int32_t>::max() / 2;
    return f.buf < lim && b.buf < lim && f.T < lim && b.total_T < lim && (g.K + 3) / 4 * 4 * f.Q < lim &&
           (g.C + 3) / 4 * 4 * b.max_Q < lim;
}

FastConvChoice fast_conv_choice(const ConvGeom& g, const Conv2dParams& p) {
    FastConvChoice c;
    if (!fast_conv_supported(g, p)) return c;
    const FwdPlan f = fwd_plan(g, p);
    const BwdPlan b = bwd_plan(g, p);
    // multiply-adds the kernels run per sample against those the convolution needs
    const double useful = double(g.K) * double(f.T) * double(g.Ho * g.Wo);
    const double fwd = double((g.K + 3) / 4 * 4) * double(f.T) * double(f.Q);
    double bwd = 0;
    for (const auto& ph : b.phases) bwd += double((g.C + 3) / 4 * 4) * double(ph.T) * double(ph.Q);
    c.forward = fwd <= kMaxWaste * useful;
    c.backward_data = bwd <= kMaxWaste * useful;
    c.backward_filter = c.forward;
    return c;
}

std::size_t fast_conv_workspace_bytes(const ConvGeom& g, const Conv2dParams& p, int threads) {
    return layout(g, p, fwd_plan(g, p), bwd_plan(g, p), threads).bytes;
}

void fast_conv_forward(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p, const float* x,
                       const float* w, const float* bias, float* y, void* workspace) {
    const FwdPlan f = fwd_plan(g, p);
    const Layout l = layout(g, p, f, bwd_plan(g, p), threads);
    float* base = aligned_base(workspace);
    float* wp = base + l.at_wp;
    auto* off = reinterpret_cast<std::int32_t*>(base + l.at_off);
    pack_weights(w, g.K, f.T, wp);
    fwd_offsets(g, p, f, off);
    const std::int64_t CHW = g.C * g.H * g.W, P = g.Ho * g.Wo;
    parallel_for_slots(threads, g.N, [&](std::int64_t n, int slot) {
        float* buf = base + l.at_slots + slot * (l.slot_a + l.slot_b);
        float* wide = buf + l.slot_a;
        fill_fwd_buffer(k, g, p, f, x + n * CHW, buf);
        k.tap_conv(buf, off, static_cast<int>(f.T), wp, static_cast<int>(g.K), static_cast<int>(f.Q), wide, f.Q);
        float* yn = y + n * g.K * P;
        for (std::int64_t kk = 0; kk < g.K; ++kk)
            k.copy_rows(yn + kk * P, g.Wo, wide + kk * f.Q, f.Wph, g.Ho, g.Wo, bias != nullptr, bias ? bias[kk] : 0.0f);
    });
}

void fast_conv_backward_data(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p,
                             const float* dy, const float* w, float* dx, void* workspace) {
    const FwdPlan f = fwd_plan(g, p);
    const BwdPlan b = bwd_plan(g, p);
    const Layout l = layout(g, p, f, b, threads);
    float* base = aligned_base(workspace);
    float* wp = base + l.at_wp;
    auto* off = reinterpret_cast<std::int32_t*>(base + l.at_off);
    std::vector<float> tmp;
    bwd_tables(g, p, b, w, off, wp, tmp);
    const std::int64_t CHW = g.C * g.H * g.W, P = g.Ho * g.Wo;
    const std::int64_t sh = p.stride_h, sw = p.stride_w;
    parallel_for_slots(threads, g.N, [&](std::int64_t n, int slot) {
        float* buf = base + l.at_slots + slot * (l.slot_a + l.slot_b);
        float* wide = buf + l.slot_a;
        const float* dyn = dy + n * g.K * P;
        for (std::int64_t kk = 0; kk < g.K; ++kk) {
            // rows of Wo values, each followed by the right padding and the next row's left padding
            float* plane = buf + kk * b.plane;
            const std::int64_t first = b.Pt * b.Wdb + b.Pl, after = (g.Ho + b.Pt) * b.Wdb + b.Pl;
            k.zero(plane, first);
            k.copy_rows(plane + first, b.Wdb, dyn + kk * P, g.Wo, g.Ho, g.Wo, false, 0.0f);
            k.zero(plane + after, b.plane - after);
        }
        k.zero(buf + g.K * b.plane, b.buf - g.K * b.plane);
        float* dxn = dx + n * CHW;
        for (const auto& ph : b.phases)
            if (ph.T > 0 && ph.nR > 0 && ph.nU > 0)
                k.tap_conv(buf, off + ph.off_begin, static_cast<int>(ph.T), wp + ph.wp_begin, static_cast<int>(g.C),
                           static_cast<int>(ph.Q), wide + ph.wide_begin, ph.Q);
        if (sh == 1 && sw == 1) {  // one phase covering all of dx
            const auto& ph = b.phases[0];
            for (std::int64_t c = 0; c < g.C; ++c)
                k.copy_rows(dxn + c * g.H * g.W, g.W, wide + c * ph.Q, b.Wdb, g.H, g.W, false, 0.0f);
            return;
        }
        if (sw == 2) {
            // dx column iw is phase (iw + pw) % 2 at position (iw + pw) / 2: each dx row interleaves the
            // rows of the two column phases of its row phase (a phase no tap reaches gives zeros)
            const std::int64_t pw = p.pad_w, b_even = pw % 2, b_odd = (pw + 1) % 2;
            for (std::int64_t a = 0; a < sh; ++a) {
                const BwdPhase& pe = b.phases[a * sw + b_even];
                const BwdPhase& po = b.phases[a * sw + b_odd];
                if (pe.nR == 0) continue;
                const std::int64_t ih0 = pe.R_lo * sh + a - p.pad_h;
                for (std::int64_t c = 0; c < g.C; ++c) {
                    const float* e = pe.T > 0 ? wide + pe.wide_begin + c * pe.Q + (pw / 2 - pe.U_lo) : nullptr;
                    const float* o = po.T > 0 && po.nU > 0 ? wide + po.wide_begin + c * po.Q + ((pw + 1) / 2 - po.U_lo) : nullptr;
                    k.interleave_rows(dxn + (c * g.H + ih0) * g.W, sh * g.W, e, o, b.Wdb, pe.nR, g.W);
                }
            }
            return;
        }
        for (const auto& ph : b.phases) {
            if (ph.nR == 0 || ph.nU == 0) continue;
            const std::int64_t ih0 = ph.R_lo * sh + ph.a - p.pad_h, iw0 = ph.U_lo * sw + ph.b - p.pad_w;
            for (std::int64_t c = 0; c < g.C; ++c)
                for (std::int64_t r = 0; r < ph.nR; ++r) {
                    float* dst = dxn + (c * g.H + ih0 + r * sh) * g.W + iw0;
                    if (ph.T == 0) {  // positions no kernel tap reaches (e.g. 1x1 kernels with stride 2)
                        for (std::int64_t u = 0; u < ph.nU; ++u) dst[u * sw] = 0.0f;
                        continue;
                    }
                    const float* src = wide + ph.wide_begin + c * ph.Q + r * b.Wdb;
                    for (std::int64_t u = 0; u < ph.nU; ++u) dst[u * sw] = src[u];
                }
        }
    });
}

void fast_conv_backward_filter(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p,
                               const float* x, const float* dy, float* dw, float* db, void* workspace) {
    const FwdPlan f = fwd_plan(g, p);
    const Layout l = layout(g, p, f, bwd_plan(g, p), threads);
    float* base = aligned_base(workspace);
    auto* off = reinterpret_cast<std::int32_t*>(base + l.at_off);
    fwd_offsets(g, p, f, off);
    float* partial = base + l.at_partial;
    const std::int64_t KT = g.K * f.T, per_chunk = KT + g.K;
    const std::int64_t KB4 = (g.K + 3) / 4 * 4;
    const std::int64_t CHW = g.C * g.H * g.W, P = g.Ho * g.Wo;
    const std::int64_t G = l.chunks;
    parallel_for_slots(threads, G, [&](std::int64_t gi, int slot) {
        float* buf = base + l.at_slots + slot * (l.slot_a + l.slot_b);
        float* gw = buf + l.slot_a;
        float* dwp = partial + gi * per_chunk;
        float* dbp = dwp + KT;
        std::memset(dwp, 0, sizeof(float) * per_chunk);
        const std::int64_t n0 = g.N * gi / G, n1 = g.N * (gi + 1) / G;
        for (std::int64_t nb = n0; nb < n1; nb += f.nsamp) {
            const int ns = static_cast<int>(std::min<std::int64_t>(f.nsamp, n1 - nb));
            for (int s = 0; s < ns; ++s) {
                const std::int64_t n = nb + s;
                fill_fwd_buffer(k, g, p, f, x + n * CHW, buf + s * f.buf);
                float* gs = gw + s * KB4 * f.Q;
                const float* dyn = dy + n * g.K * P;
                for (std::int64_t kk = 0; kk < g.K; ++kk) {
                    // wide rows: Wo values, then zeros up to Wph (those positions must not count)
                    float* grow = gs + kk * f.Q;
                    k.copy_rows(grow, f.Wph, dyn + kk * P, g.Wo, g.Ho, g.Wo, false, 0.0f);
                    k.zero(grow + g.Ho * f.Wph, f.Q - g.Ho * f.Wph);
                    if (db) {
                        float sum = 0.0f;
                        for (std::int64_t i = 0; i < P; ++i) sum += dyn[kk * P + i];
                        dbp[kk] += sum;
                    }
                }
                k.zero(gs + g.K * f.Q, (KB4 - g.K) * f.Q);
            }
            k.tap_wgrad(buf, off, static_cast<int>(f.T), gw, f.Q, static_cast<int>(g.K), static_cast<int>(f.Q), dwp, ns,
                        f.buf, KB4 * f.Q);
        }
    });
    // Reduce the chunks' partials in chunk order.
    add_chunk_partials(threads, partial, G, KT, g.K, dw, db);
}

}  // namespace hr::cpu
