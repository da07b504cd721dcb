#pragma once
// OpenBLAS, loaded at run time. OpenBLAS 0.3.21 (Debian 12) does not recognise recent Xeon CPUs and
// falls back to its generic SSE3 ("Prescott") kernels, which made seed-cnn training 10x slower on our
// CI machines. OpenBLAS only reads OPENBLAS_CORETYPE when the library loads, so the backend sets it
// from the CPU's features (AVX-512 -> SkylakeX, AVX2+FMA -> Haswell) when the user has not, and then
// dlopen()s the library. An OPENBLAS_CORETYPE set by the user is always respected.
#include <string>

namespace hr::cpu {

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);
void dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
           int ldb, double beta, double* c, int ldc);
// y (n) = alpha * op(A) x + beta * y, row-major A: trans false, A (n, k) and x (k) with stride incx; trans true,
// A (k, n) read as its transpose. (cblas_sgemv: reads each of A's values once, where sgemm with one row
// first packs the whole matrix; decoding one token is this, and bound by the memory A is read from.)
void sgemv(bool trans, int n, int k, float alpha, const float* a, int lda, const float* x, int incx, float beta,
           float* y);
// "OpenBLAS 0.3.21, SkylakeX kernels"
std::string blas_description();

}  // namespace hr::cpu
