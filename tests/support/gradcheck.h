#pragma once
// The finite-difference gradient check of the gradcheck tests (tests/unit/test_gradcheck.cpp,
// test_transformer_gradcheck.cpp), with torch.autograd.gradcheck's tolerances: central differences with
// eps 1e-6 in f64, |numeric - analytic| <= atol 1e-5 + rtol 1e-3 * |numeric|.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace hrtest {

constexpr double kGradEps = 1e-6, kGradAtol = 1e-5, kGradRtol = 1e-3;

inline std::vector<double> random_vec(std::size_t n, std::mt19937_64& g, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

struct Mismatch {
    std::string where;
    double analytic, numeric;
};

// Compares analytic and numeric derivatives of f at the doubles in `values` (perturbed in place and
// restored), at up to max_checks evenly spread positions; each mismatch is appended to `bad`.
inline void compare(const std::string& what, double* values, std::size_t n, const std::vector<double>& analytic,
                    const std::function<double()>& f, std::vector<Mismatch>& bad, std::size_t max_checks = 60) {
    const std::size_t stride = std::max<std::size_t>(1, n / max_checks);
    for (std::size_t i = 0; i < n; i += stride) {
        const double keep = values[i];
        values[i] = keep + kGradEps;
        const double fp = f();
        values[i] = keep - kGradEps;
        const double fm = f();
        values[i] = keep;
        const double num = (fp - fm) / (2 * kGradEps);
        if (!(std::abs(num - analytic[i]) <= kGradAtol + kGradRtol * std::abs(num)))
            bad.push_back({what + "[" + std::to_string(i) + "]", analytic[i], num});
    }
}

}  // namespace hrtest
