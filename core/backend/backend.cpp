#include "backend/backend.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace hr {

float counter_uniform(std::uint64_t seed, std::uint64_t counter) {
    // SplitMix64 over (seed, counter): cheap, stateless, identical on every backend.
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

std::vector<float> rope_frequencies(const RopeParams& p, std::int64_t D) {
    const double pi = 3.14159265358979323846;
    std::vector<float> f(static_cast<std::size_t>(std::max<std::int64_t>(D / 2, 0)));
    for (std::size_t i = 0; i < f.size(); ++i) {
        // transformers: 1 / theta^(arange(0, D, 2) / D) in f32
        const float base = static_cast<float>(1.0 / std::pow(p.theta, static_cast<double>(2 * i) / static_cast<double>(D)));
        double v = base;
        if (p.factor > 0) {
            const double low_wl = p.original_max_positions / p.low_freq_factor;
            const double high_wl = p.original_max_positions / p.high_freq_factor;
            const double wl = 2 * pi / v;
            if (wl > low_wl) {
                v = v / p.factor;
            } else if (wl >= high_wl) {
                const double s = (p.original_max_positions / wl - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor);
                v = (1 - s) * v / p.factor + s * v;
            }
        }
        f[i] = static_cast<float>(v);
    }
    return f;
}

namespace {
[[noreturn]] void not_here(const Backend& b, const char* op) {
    throw Error(std::string(op) + ": the " + b.name() + " backend does not run this op; train on the CPU (--device cpu)");
}
}  // namespace

void Backend::do_rmsnorm_forward(const Tensor&, const Tensor&, float, Tensor&, Tensor&) { not_here(*this, "rmsnorm_forward"); }
void Backend::do_rmsnorm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor&) {
    not_here(*this, "rmsnorm_backward");
}
void Backend::do_rope_apply(Tensor&, int, const RopeParams&, bool) { not_here(*this, "rope_apply"); }
void Backend::do_swiglu_forward(const Tensor&, const Tensor&, Tensor&) { not_here(*this, "swiglu_forward"); }
void Backend::do_swiglu_backward(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor&) {
    not_here(*this, "swiglu_backward");
}
void Backend::do_rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first) {
    if (first != 0) not_here(*this, "rope_apply_at");
    do_rope_apply(x, heads, p, false);
}
void Backend::do_attention_cached(const Tensor&, Tensor&, Tensor&, std::int64_t, const AttentionParams&, Tensor&,
                                  Tensor&) {
    not_here(*this, "attention_cached");
}

}  // namespace hr
